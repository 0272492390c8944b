package lexical_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// corliss is a retrieval from the HotpotQA dev set (CC BY-SA 4.0), shortened.
var corliss = struct {
	query, reference string
	chunks           []string
	truth            []bool
}{
	query:     "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?",
	reference: "Chief of Protocol",
	chunks: []string{
		"Meet Corliss Archer, a program from radio's Golden Age, ran from January 7, 1943 to September 30, 1956. Although it was CBS's answer to NBC's popular \"A Date with Judy\", it was also broadcast by NBC in 1948.",
		"Shirley Temple Black (April 23, 1928 – February 10, 2014) was an American actress, singer, dancer, businesswoman, and diplomat. As an adult, she was named United States ambassador to Ghana and to Czechoslovakia and also served as Chief of Protocol of the United States.",
		"Janet Marie Waldo (February 4, 1920 – June 12, 2016) was an American radio and voice actress. She is best known in animation for voicing Judy Jetson, and on radio as the title character in \"Meet Corliss Archer\".",
		"The post of Lord High Treasurer or Lord Treasurer was an English government position and has been a British government position since the Acts of Union of 1707.",
		"Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer. In the film, two teenage girls cause their respective parents much concern when they start to become interested in boys.",
		"Charles Craft (May 9, 1902 – September 19, 1968) was an English-born American film and television editor.",
	},
	truth: []bool{false, true, false, false, true, false},
}

func relevant(vs []lexical.Verdict) []bool {
	out := make([]bool, len(vs))
	for i, v := range vs {
		out[i] = v.Relevant
	}
	return out
}

func TestJudgeExample(t *testing.T) {
	vs := lexical.Judge(corliss.query, corliss.reference, corliss.chunks)
	if got := relevant(vs); !reflect.DeepEqual(got, corliss.truth) {
		for i, v := range vs {
			t.Logf("chunk %d: %v %s", i, v.Relevant, v.Reason)
		}
		t.Fatalf("verdicts %v, want %v", got, corliss.truth)
	}
	if want := `contains the answer "Chief of Protocol" (confidence `; !strings.HasPrefix(vs[1].Reason, want) {
		t.Errorf("reason %q, want %q", vs[1].Reason, want)
	}
	if !strings.Contains(vs[4].Reason, `"Kiss and Tell"`) {
		t.Errorf("reason %q does not name the subject", vs[4].Reason)
	}
	for i, v := range vs {
		if v.Reason == "" {
			t.Errorf("chunk %d: empty reason", i)
		}
	}
}

// A reference that adds nothing to the query carries no lexical signal: the
// verdicts must be those of an empty reference, i.e. judged on the query.
func TestJudgeUninformativeReference(t *testing.T) {
	q := "Are both Kiss and Tell and A Kiss for Corliss American comedy films?"
	chunks := []string{
		"Kiss and Tell is a 1945 American comedy film starring Shirley Temple. Yes, it was a hit, no doubt.",
		"A Kiss for Corliss is a 1949 American comedy film directed by Richard Wallace.",
		"The post of Lord High Treasurer was an English government position. Yes.",
		"Yes is an English rock band formed in 1968.",
	}
	base := lexical.Judge(q, "", chunks)
	if got := relevant(base); !reflect.DeepEqual(got, []bool{true, true, false, false}) {
		t.Fatalf("empty reference: %v", got)
	}
	for _, ref := range []string{"yes", "Yes.", "no", "NO!", "  ", "Yes, they are", "Kiss and Tell", "the"} {
		if got := lexical.Judge(q, ref, chunks); !reflect.DeepEqual(got, base) {
			t.Errorf("reference %q: verdicts differ from an empty reference:\n got %v\nwant %v", ref, got, base)
		}
	}
}

// Property: when the reference has a word the query lacks and occurs in at
// most half of the chunks, every chunk containing it verbatim is relevant.
func TestJudgeContainmentProperty(t *testing.T) {
	vocab := strings.Fields(`album band river city film season club league party station
		museum bridge church school novel singer actor team island village castle army
		Boston Paris Temple Archer Kansas Walker Morton Richardson Ohio Lempster`)
	rng := rand.New(rand.NewPCG(7, 11))
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(20)
		query := text(3 + rng.IntN(10))
		reference := []string{"Chief of Protocol", "3,677 seated", "Greenwich Village, New York City", "1838", "Zq"}[rng.IntN(5)]
		chunks := make([]string, n)
		for i := range chunks {
			chunks[i] = text(rng.IntN(120))
		}
		contains := map[int]bool{}
		for k := 1 + rng.IntN(max(1, n/2)); k > 0; k-- {
			i := rng.IntN(n)
			contains[i] = true
			w := strings.Fields(chunks[i])
			at := rng.IntN(len(w) + 1)
			chunks[i] = strings.Join(append(w[:at:at], append([]string{reference}, w[at:]...)...), " ")
		}
		vs := lexical.Judge(query, reference, chunks)
		for i := range chunks {
			if contains[i] && !vs[i].Relevant {
				t.Fatalf("trial %d: chunk %d contains %q but is judged %+v\nquery %q\nchunk %q", trial, i, reference, vs[i], query, chunks[i])
			}
		}
	}
}

func TestJudgeEdgeCases(t *testing.T) {
	q, ref := corliss.query, corliss.reference
	tests := []struct {
		name             string
		query, reference string
		chunks           []string
		want             []bool
	}{
		{"nil chunks", q, ref, nil, []bool{}},
		{"no chunks", q, ref, []string{}, []bool{}},
		{"one relevant chunk", q, ref, corliss.chunks[1:2], []bool{true}},
		{"one unrelated chunk", q, ref, corliss.chunks[5:6], []bool{false}},
		{"one chunk sharing a query name", q, "", corliss.chunks[4:5], []bool{true}},
		{"empty chunks", q, ref, []string{"", "", ""}, []bool{false, false, false}},
		{"empty and relevant chunk", q, ref, []string{"", corliss.chunks[1], "  "}, []bool{false, true, false}},
		{"empty query and reference", "", "", corliss.chunks[:3], []bool{false, false, false}},
		{"stop words only", "what is the", "it was", corliss.chunks[:3], []bool{false, false, false}},
		{"empty query", "", ref, corliss.chunks, []bool{false, true, false, false, false, false}},
		{"punctuation only", "?!", "...", []string{"!!", "?"}, []bool{false, false}},
		{"identical chunks", q, "", []string{corliss.chunks[4], corliss.chunks[4], corliss.chunks[4]}, []bool{true, true, true}},
		{"invalid UTF-8", "Kiss\xff and \xfeTell\xc3", "Chief\xffof Protocol", []string{"\xff\xfe", "Chief of Protocol \xc3\x28", "Kiss and Tell\xe2\x82 is a film"}, []bool{false, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := lexical.Judge(tc.query, tc.reference, tc.chunks)
			if len(vs) != len(tc.chunks) {
				t.Fatalf("%d verdicts for %d chunks", len(vs), len(tc.chunks))
			}
			if got := relevant(vs); !reflect.DeepEqual(got, tc.want) {
				for i, v := range vs {
					t.Logf("chunk %d: %s", i, v.Reason)
				}
				t.Errorf("verdicts %v, want %v", got, tc.want)
			}
			for i, v := range vs {
				if v.Reason == "" || !utf8.ValidString(v.Reason) {
					t.Errorf("chunk %d: reason %q is empty or not UTF-8", i, v.Reason)
				}
			}
		})
	}
}

// The relative rule must not force a count: whatever the number of chunks
// that match equally well, they are all relevant, and unrelated ones are not.
func TestJudgeNoCountPrior(t *testing.T) {
	match := corliss.chunks[4]
	other := corliss.chunks[5]
	for _, n := range []int{1, 2, 3, 5, 10, 20} {
		for _, k := range []int{1, n / 2, n} {
			if k == 0 {
				continue
			}
			chunks := make([]string, n)
			want := make([]bool, n)
			for i := range chunks {
				chunks[i] = fmt.Sprintf("%s (%d)", other, i)
				if i%(n/k) == 0 && i/(n/k) < k {
					chunks[i], want[i] = fmt.Sprintf("%s (%d)", match, i), true
				}
			}
			if got := relevant(lexical.Judge(corliss.query, "", chunks)); !reflect.DeepEqual(got, want) {
				t.Errorf("%d of %d chunks match: verdicts %v, want %v", k, n, got, want)
			}
		}
	}
}

func TestJudgeHugeInputs(t *testing.T) {
	huge := corliss.chunks[1] + strings.Repeat(" filler words of no interest", 200_000) // ~5.6 MB
	late := strings.Repeat("filler words of no interest ", 2_000) + corliss.reference
	hugeRef := strings.Repeat("Chief of Protocol ", 100_000)
	var vs []lexical.Verdict
	work := allocated(func() { vs = lexical.Judge(corliss.query, corliss.reference, []string{huge, late, corliss.chunks[5]}) })
	if !vs[0].Relevant {
		t.Errorf("huge chunk with the answer at its start: %+v", vs[0])
	}
	// The answer is beyond MaxChunkRunes: documented as not seen.
	if vs[1].Relevant {
		t.Errorf("answer after the %d-rune cap was seen: %+v", lexical.MaxChunkRunes, vs[1])
	}
	hugeQuery := strings.Repeat(corliss.query+" ", 10_000)
	work += allocated(func() { vs = lexical.Judge(hugeQuery, hugeRef, []string{huge, corliss.chunks[5]}) })
	if len(vs) != 2 {
		t.Fatalf("%d verdicts", len(vs))
	}
	for i, v := range vs {
		if len(v.Reason) > 200 {
			t.Errorf("chunk %d: reason of %d bytes: %.80q…", i, len(v.Reason), v.Reason)
		}
	}
	// Only the first MaxChunkRunes of a chunk (and MaxQueryRunes of the
	// query and reference) are read: the memory used is bounded by those,
	// not by the ~12 MB given. Measured in bytes, not seconds, so that a
	// busy machine cannot fail it.
	if work > 1<<20 {
		t.Errorf("huge inputs allocated %d bytes: more than the read limits allow", work)
	}
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The work must stay linear in the number of chunks: 10,000 chunks cost
// about ten times 1,000. The work is measured as memory allocated, which a
// busy machine does not change; BenchmarkJudgeSpan measures the time.
func TestJudgeManyChunks(t *testing.T) {
	chunks := make([]string, 10_000)
	for i := range chunks {
		chunks[i] = corliss.chunks[i%len(corliss.chunks)]
	}
	cost := func(c []string) uint64 {
		var vs []lexical.Verdict
		n := allocated(func() { vs = lexical.Judge(corliss.query, corliss.reference, c) })
		if len(vs) != len(c) {
			t.Fatalf("%d verdicts for %d chunks", len(vs), len(c))
		}
		return n
	}
	small, large := cost(chunks[:1_000]), cost(chunks)
	t.Logf("1,000 chunks: %d bytes; 10,000 chunks: %d bytes", small, large)
	if large > 15*small {
		t.Errorf("10x the chunks allocated %.1fx the memory: not linear", float64(large)/float64(small))
	}
}

func TestJudgeDeterministic(t *testing.T) {
	want := lexical.Judge(corliss.query, corliss.reference, corliss.chunks)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got := lexical.Judge(corliss.query, corliss.reference, corliss.chunks); !reflect.DeepEqual(got, want) {
					t.Errorf("verdicts changed between calls:\n got %+v\nwant %+v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Reordering chunks reorders verdicts and nothing else: IDF and the cut
	// depend on the set of chunks, not their order.
	rev := make([]string, len(corliss.chunks))
	for i, c := range corliss.chunks {
		rev[len(rev)-1-i] = c
	}
	got := lexical.Judge(corliss.query, corliss.reference, rev)
	for i := range rev {
		if got[i] != want[len(want)-1-i] {
			t.Errorf("reversed chunk %d: %+v, want %+v", i, got[i], want[len(want)-1-i])
		}
	}
}

func TestDefaultParamsIsACopy(t *testing.T) {
	p := lexical.DefaultParams()
	p.Alpha = 0
	if lexical.DefaultParams().Alpha == 0 {
		t.Fatal("DefaultParams returned shared state")
	}
}

// A generated answer is a sentence, not a short span: the chunk about the
// answer's own subject ("Paris …") is as relevant as the one about the
// question's ("France's …"), and the unrelated one is not.
func TestJudgeSentenceReference(t *testing.T) {
	got := lexical.Judge("What is the capital of France?", "The capital of France is Paris.", []string{
		"Paris is the capital and most populous city of France.",
		"Bananas are an excellent source of potassium and fibre.",
		"France's capital, Paris, sits on the Seine.",
	})
	want := []bool{true, false, true}
	for i, v := range got {
		if v.Relevant != want[i] {
			t.Errorf("chunk %d: %v (%s), want %v", i+1, v.Relevant, v.Reason, want[i])
		}
	}
	if !strings.Contains(got[0].Reason, `"Paris"`) {
		t.Errorf("reason %q should name the chunk's subject", got[0].Reason)
	}
}

// Params.ChunkRunes sets how much of a chunk is read, in either direction
// from MaxChunkRunes: the engine's cut applies here too.
func TestJudgeChunkRunes(t *testing.T) {
	filler := strings.Repeat("filler words of no interest ", 400) // 11,200 runes
	early := "Chief of Protocol " + filler
	at := func(runes int) string { // the answer starting at the given rune
		return strings.Repeat("x", runes-1) + " " + corliss.reference + " " + filler
	}
	chunks := func(answer string) []string { return []string{answer, corliss.chunks[5], corliss.chunks[3]} }
	// want: the chunk is found to contain the answer.
	tests := []struct {
		name       string
		chunkRunes int
		chunk      string
		want       bool
	}{
		{"default, answer early", 0, early, true},
		{"default, answer past MaxChunkRunes", 0, at(lexical.MaxChunkRunes + 100), false},
		{"4000, answer within", 4000, at(3000), true},
		{"4000, answer straddling the cut", 4000, at(3995), false},
		{"4000, answer past the cut", 4000, at(5000), false},
		{"16000, answer past MaxChunkRunes", 16000, at(lexical.MaxChunkRunes + 100), true},
		{"negative is the default", -1, at(lexical.MaxChunkRunes + 100), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := lexical.DefaultParams()
			p.ChunkRunes = tc.chunkRunes
			v := p.Judge(corliss.query, corliss.reference, chunks(tc.chunk))[0]
			if got := strings.HasPrefix(v.Reason, "contains the answer"); got != tc.want || got && !v.Relevant {
				t.Errorf("answer found: %v, want %v (%v: %s)", got, tc.want, v.Relevant, v.Reason)
			}
		})
	}
}

// A Prepared judges as Judge does, for any chunks, from many goroutines.
func TestPreparedSameAsJudge(t *testing.T) {
	pr := lexical.DefaultParams().Prepare(corliss.query, corliss.reference)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n <= len(corliss.chunks); n++ {
				chunks := corliss.chunks[(g+n)%len(corliss.chunks):]
				chunks = chunks[:min(n, len(chunks))]
				if got, want := pr.Judge(chunks), lexical.Judge(corliss.query, corliss.reference, chunks); !reflect.DeepEqual(got, want) {
					t.Errorf("%d chunks: prepared %+v, Judge %+v", len(chunks), got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// Confidence is 0 for a relevant verdict that only the absence of other
// chunks, or of any difference between them, allowed; a chunk far below
// the evidence floor is surely irrelevant; and the reason ends with it.
func TestJudgeConfidence(t *testing.T) {
	kiss, craft := corliss.chunks[4], corliss.chunks[5]
	cases := []struct {
		name   string
		chunks []string
	}{
		{"one chunk", []string{kiss}},
		{"identical chunks", []string{kiss, kiss, kiss}},
	}
	for _, tc := range cases {
		for i, v := range lexical.Judge(corliss.query, "", tc.chunks) {
			if !v.Relevant || v.Confidence != 0 {
				t.Errorf("%s, chunk %d: relevant %v with confidence %v, want relevant with 0", tc.name, i, v.Relevant, v.Confidence)
			}
		}
	}
	vs := lexical.Judge(corliss.query, corliss.reference, corliss.chunks)
	if v := vs[5]; v.Relevant || v.Confidence != 1 {
		t.Errorf("unrelated chunk: relevant %v with confidence %v, want irrelevant with 1", v.Relevant, v.Confidence)
	}
	if v := vs[4]; !v.Relevant || v.Confidence < 0.5 {
		t.Errorf("chunk about a query name: relevant %v with confidence %v, want relevant with >= 0.5", v.Relevant, v.Confidence)
	}
	if v := lexical.Judge(corliss.query, "", []string{craft})[0]; v.Relevant || v.Confidence != 1 {
		t.Errorf("one unrelated chunk: relevant %v with confidence %v, want irrelevant with 1: the floor needs no other chunk", v.Relevant, v.Confidence)
	}
	for i, v := range vs {
		if want := fmt.Sprintf(" (confidence %.2f)", v.Confidence); !strings.HasSuffix(v.Reason, want) {
			t.Errorf("chunk %d: reason %q does not end with %q", i, v.Reason, want)
		}
	}
}
