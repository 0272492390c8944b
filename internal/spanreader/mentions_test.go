package spanreader

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mentionsTexts are texts mentionsDocuments searches, none of which
// mentions page_content: prose, JSON of prose, LangChain's serialisation of
// a chat message, and texts crafted to make every jump short.
func mentionsTexts() map[string]string {
	return map[string]string{
		"prose":              prose,
		"json":               `{"outputs": {"answer": "` + prose + `"}, "kwargs": {"tags": ["seq:step:3"]}}`,
		"langchain json":     `{"outputs": ` + langChainMessage + `, "kwargs": {"tags": ["seq:step:3"], "run_id": null}}`,
		"short json":         `{"result": "ok", "items": [1, 2, 3]}`,
		"task json":          `{"outputs": {"answer": "Paris."}, "kwargs": {"tags": []}}`,
		"underscores":        strings.Repeat("_", 2048),
		"page_conten":        strings.Repeat("page_conten", 186),
		"anchors":            strings.Repeat("_gpc", 512),
		"age_content":        strings.Repeat("age_content_", 170),
		"snake_case":         strings.Repeat("page_count, page_context, usage_content, ", 50),
		"PAGE_CONTENT":       strings.Repeat(`{"PAGE_CONTENT": "x"}, `, 90),
		"page_content split": strings.Repeat("page_\ncontent page _content ", 70),
	}
}

// mentionsDocuments is strings.Contains(s, "page_content"), whatever the
// text: page_content at every place in crafted texts, and random texts of
// page_content's bytes.
func TestMentionsDocumentsIsContains(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want := strings.Contains(s, traceloopDocumentsKey)
		for _, m := range mentionsImpls {
			if got := m.f(s); got != want {
				t.Fatalf("%s(%.80q… (%d bytes)) = %v, want %v", m.name, s, len(s), got, want)
			}
		}
	}
	for name, text := range mentionsTexts() {
		if mentionsDocuments(text) {
			t.Fatalf("%s: found", name)
		}
		for _, text := range []string{text, text[:len(text)/3], text[len(text)/2:]} {
			for at := 0; at <= len(text); at++ {
				check(text[:at] + traceloopDocumentsKey + text[at:])
				check(text[:at] + traceloopDocumentsKey)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "page_content_gpc\"{} "
	b := make([]byte, 0, 512)
	for range 200_000 {
		b = b[:0]
		for n := rng.IntN(80); len(b) < n; {
			if rng.IntN(16) == 0 {
				k := rng.IntN(len(traceloopDocumentsKey))
				b = append(b, traceloopDocumentsKey[:k]...) // a prefix
				continue
			}
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		if rng.IntN(4) == 0 {
			at := rng.IntN(len(b) + 1)
			b = append(b[:at], append([]byte(traceloopDocumentsKey), b[at:]...)...)
		}
		check(string(b))
	}
	for n := range 40 {
		check(strings.Repeat("_", n))
		check(traceloopDocumentsKey[:min(n, len(traceloopDocumentsKey))])
	}
}

// mentionsImpls are the searches mentionsDocuments chooses from, each run
// explicitly whatever the machine: the pure-Go search, which other
// architectures run, and the vector search where there is one
// (mentions_amd64_test.go adds it).
var mentionsImpls = []mentionsImpl{{"go", false}}

type mentionsImpl struct {
	name string
	avx2 bool
}

// f is mentionsDocuments with this search.
func (m mentionsImpl) f(s string) (found bool) {
	withAVX2(m.avx2, func() { found = mentionsDocuments(s) })
	return found
}

// Every implementation is strings.Contains for every length up to 200, on
// texts of one filler each: page_content at every place, cut at every
// place of the end, and with each of its bytes changed.
func TestMentionsDocumentsEveryPlace(t *testing.T) {
	fillers := []string{"x", "_", "_c", "page_conten", "age_content", `"a_b": "c", `, prose}
	b := make([]byte, 0, 256)
	check := func(b []byte) {
		t.Helper()
		s := string(b)
		want := strings.Contains(s, traceloopDocumentsKey)
		for _, m := range mentionsImpls {
			if got := m.f(s); got != want {
				t.Fatalf("%s(%q) = %v, want %v", m.name, s, got, want)
			}
		}
	}
	const key = traceloopDocumentsKey
	for _, filler := range fillers {
		for n := 0; n <= 200; n++ {
			b = b[:0]
			for len(b) < n {
				b = append(b, filler...)
			}
			b = b[:n]
			base := string(b)
			check(b)
			for at := 0; at+len(key) <= n; at++ {
				copy(b[at:], key)
				check(b)
				for k := range len(key) {
					b[at+k] ^= 0x20 // 'p' to 'P', '_' to DEL: a near miss
					check(b)
					b[at+k] ^= 0x20
				}
				copy(b, base)
			}
			for k := 1; k < len(key) && k <= n; k++ {
				copy(b[n-k:], key[:k]) // a prefix cut by the end
				check(b)
				copy(b, base)
			}
		}
	}
}

func FuzzMentionsDocuments(f *testing.F) {
	for _, text := range mentionsTexts() {
		f.Add(text[:min(len(text), 300)])
	}
	f.Add("page_content")
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.Contains(s, traceloopDocumentsKey)
		for _, m := range mentionsImpls {
			if got := m.f(s); got != want {
				t.Fatalf("%s(%q) = %v, want %v", m.name, s, got, want)
			}
		}
	})
}

// BenchmarkMentionsDocuments is the search on texts that do not mention
// page_content (all of each is read), against strings.Contains and against
// strings.IndexByte of a byte the text does not hold: one vector pass over
// the text, the floor of any exact search. Run:
//
//	go test -run XXX -bench MentionsDocuments ./internal/spanreader/
func BenchmarkMentionsDocuments(b *testing.B) {
	for name, text := range mentionsTexts() {
		for _, f := range []struct {
			name string
			f    func(string) bool
		}{
			{"mentionsDocuments", mentionsDocuments},
			{"strings.Contains", func(s string) bool { return strings.Contains(s, traceloopDocumentsKey) }},
			{"floor", func(s string) bool { return strings.IndexByte(s, 0) >= 0 }},
		} {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if f.f(text) {
						b.Fatal("found")
					}
				}
			})
		}
	}
}

// BenchmarkMentionsDocumentsImpls times each of mentionsImpls on the same
// texts in the same loop, in turn, and reports ns per call for each, from
// its fastest batch (the one least disturbed by other processes), and each
// as a multiple of the first (the pure-Go search): long texts of prose, JSON and
// underscores, and short ones, around the length the vector search needs.
// A batch is a call on each of 100 copies of the text, as the processor
// searches the outputs of 100 spans: 2 KB texts are read from L2, not L1.
// Run:
//
//	go test -run XXX -bench MentionsDocumentsImpls -count 5 ./internal/spanreader/
func BenchmarkMentionsDocumentsImpls(b *testing.B) {
	texts := mentionsTexts()
	short := texts["langchain json"]
	cases := []struct{ name, text string }{
		{"prose", texts["prose"]},
		{"json", texts["json"]},
		{"langchain json", texts["langchain json"]},
		{"underscores", texts["underscores"]},
		{"snake_case", texts["snake_case"]},
		{"short json", texts["short json"]},
		{"task json", texts["task json"]},
	}
	for _, n := range []int{16, 43, 48, 63, 100, 200} {
		cases = append(cases, struct{ name, text string }{"langchain json " + strconv.Itoa(n), short[len(short)-n:]})
	}
	const batch = 100
	for _, c := range cases {
		if strings.Contains(c.text, traceloopDocumentsKey) {
			b.Fatalf("%s: found", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			fastest := make([]time.Duration, len(mentionsImpls))
			for i := range fastest {
				fastest[i] = time.Hour
			}
			found := false
			copies := make([]string, batch)
			for i := range copies {
				copies[i] = strings.Clone(c.text)
			}
			for b.Loop() {
				for i, m := range mentionsImpls {
					withAVX2(m.avx2, func() {
						start := time.Now()
						for _, text := range copies {
							found = found || mentionsDocuments(text)
						}
						fastest[i] = min(fastest[i], time.Since(start))
					})
				}
			}
			if found {
				b.Fatal("found")
			}
			perCall := func(i int) float64 { return float64(fastest[i].Nanoseconds()) / batch }
			for i, m := range mentionsImpls {
				b.ReportMetric(perCall(i), m.name+"-ns/call")
				b.ReportMetric(float64(len(c.text))/perCall(i), m.name+"-B/ns")
				if i > 0 {
					b.ReportMetric(perCall(i)/perCall(0), m.name+"-x-"+mentionsImpls[0].name)
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
