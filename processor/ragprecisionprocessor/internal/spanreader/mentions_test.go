package spanreader

import (
	"math/rand/v2"
	"strings"
	"testing"
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
		if got, want := mentionsDocuments(s), strings.Contains(s, traceloopDocumentsKey); got != want {
			t.Fatalf("mentionsDocuments(%.80q… (%d bytes)) = %v, want %v", s, len(s), got, want)
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

func FuzzMentionsDocuments(f *testing.F) {
	for _, text := range mentionsTexts() {
		f.Add(text[:min(len(text), 300)])
	}
	f.Add("page_content")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := mentionsDocuments(s), strings.Contains(s, traceloopDocumentsKey); got != want {
			t.Fatalf("mentionsDocuments(%q) = %v, want %v", s, got, want)
		}
	})
}

// BenchmarkMentionsDocuments is the search on texts that do not mention
// page_content (all of each is read), against strings.Contains and against
// strings.IndexByte of a byte the text does not hold: one vector pass over
// the text, the floor of any exact search. Run:
//
//	go test -run XXX -bench MentionsDocuments ./processor/ragprecisionprocessor/internal/spanreader/
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
