package lexical

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragprecision/ragprecision/internal/hotpotqa"
)

// The judge was rewritten for speed on the promise that no verdict and no
// reason changes. These tests hold it to that against the frozen reference
// (reference_test.go), on real retrievals and on generated ones built to
// reach the corners of the tokenizer.

// sameAsReference reports how the optimised judge's verdicts differ from
// the reference's, or "" when they do not: the same relevance, and the same
// reason but for the confidence the optimised judge adds at its end.
func sameAsReference(got []Verdict, want []refVerdict) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d verdicts, reference %d", len(got), len(want))
	}
	for i := range got {
		// The reason is the reference's, followed by the confidence.
		suffix := string(appendConfidence(nil, got[i].Confidence))
		if got[i].Relevant != want[i].Relevant || got[i].Reason != want[i].Reason+suffix {
			return fmt.Sprintf("chunk %d: %v %q\nreference: %v %q", i, got[i].Relevant, got[i].Reason, want[i].Relevant, want[i].Reason)
		}
	}
	return ""
}

// refParamsOf is p for the reference judge.
func refParamsOf(p Params) refParams {
	return refParams{
		QueryWeight: p.QueryWeight, AnswerWeight: p.AnswerWeight, NameWeight: p.NameWeight, SubjectWeight: p.SubjectWeight,
		PartialAnswer: p.PartialAnswer, LeadWords: p.LeadWords, Alpha: p.Alpha, Beta: p.Beta, MinEvidence: p.MinEvidence,
	}
}

func checkSame(t *testing.T, p Params, query, reference string, chunks []string) {
	t.Helper()
	got := p.Judge(query, reference, chunks)
	want := refParamsOf(p).Judge(query, reference, chunks)
	if diff := sameAsReference(got, want); diff != "" {
		t.Fatalf("differs from the reference\nquery %q\nreference %q\nchunks %q\n%s", query, reference, chunks, diff)
	}
}

func loadQuestions(t testing.TB) []hotpotqa.Question {
	t.Helper()
	path, err := hotpotqa.DefaultPath()
	if errors.Is(err, hotpotqa.ErrNotFound) {
		t.Skipf("HotpotQA sample not available, nothing to compare on: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	qs, err := hotpotqa.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// Every HotpotQA retrieval, with and without titles, whole, one chunk at a
// time and as its first half, judged with the defaults and with each
// parameter nudged as the tuning report does.
func TestSameAsReferenceHotpotQA(t *testing.T) {
	qs := loadQuestions(t)
	params := []Params{DefaultParams()}
	if !testing.Short() {
		for _, nudge := range []func(*Params){
			func(p *Params) { p.QueryWeight = 0 },
			func(p *Params) { p.AnswerWeight *= 1.25 },
			func(p *Params) { p.NameWeight = 0 },
			func(p *Params) { p.SubjectWeight *= 0.8 },
			func(p *Params) { p.PartialAnswer = 0 },
			func(p *Params) { p.LeadWords = 0 },
			func(p *Params) { p.Alpha, p.Beta = 0.5, 2 },
			func(p *Params) { p.MinEvidence = 0 },
			func(p *Params) { p.MinEvidence = 1 },
		} {
			p := DefaultParams()
			nudge(&p)
			params = append(params, p)
		}
	}
	retrievals := 0
	for _, q := range qs {
		for _, titles := range []bool{false, true} {
			chunks := q.Chunks(titles)
			for pi, p := range params {
				checkSame(t, p, q.Text, q.Answer, chunks)
				retrievals++
				if pi > 0 {
					continue
				}
				checkSame(t, p, q.Text, q.Answer, chunks[:len(chunks)/2])
				checkSame(t, p, q.Text, "", chunks)
				for _, c := range chunks {
					checkSame(t, p, q.Text, q.Answer, []string{c})
				}
				retrievals += 2 + len(chunks)
			}
		}
	}
	t.Logf("%d retrievals judged as the reference judges them", retrievals)
}

// vocabulary mixes what the judge treats specially: stop words, plurals of
// every kind the stemmer knows, capitalised names, numbers with separators,
// non-ASCII letters whose lower case has another length in bytes (K, the
// Kelvin sign, and İ), title case, combining marks, CJK, and every kind of
// separator: joiners, breaks, Unicode spaces, invalid bytes and U+FFFD.
var vocabulary = strings.Fields(`
	the of and or a in is was what who which yes no it its Its The And Of
	film films Film Films party parties Parties series species movies heroes toes
	boxes glass Glass campus Paris paris is gas album albums athletes Athletes
	eies aies Aies oes ees aes ies us ss is s ies's FILMS PARTIES
	Kiss Tell Corliss Archer Shirley Temple Black Chief Protocol United States
	1998 1945 3,677 1.5 2,000,000 12.5.6 1, ,1 .5 5. 
	Colisée ÉCOLE Straße İstanbul Kelvin ǅemal ǆ näive 東京 タワー Ωmega ΣΊΣΥΦΟΣ
	: ; ( ) , . ! ? - – — ' " “ ” ‘ ’ ‐ ‑ & / * … « »
	` + "\xff \xfe \xc3 \xe2\x82 \uFFFD \u00a0 \u0085 \u2003 \t \n")

func randomText(rng *rand.Rand, words int) string {
	var b strings.Builder
	for i := 0; i < words; i++ {
		w := vocabulary[rng.IntN(len(vocabulary))]
		b.WriteString(w)
		switch rng.IntN(4) {
		case 0: // glued to the next word: "Kiss:Tell", "3,677.5"
		case 1:
			b.WriteString("  ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// reasonKinds are a fragment of each kind of reason the judge gives.
var reasonKinds = []string{"contains the answer", ", named in the query", "partly named", "shares", "of the answer's terms",
	"of the query's terms", "has no term", "low overlap", "other chunks match better"}

// Generated retrievals, the reference planted in some chunks, with random
// parameters half of the time. The test would pass vacuously if they never
// reached some of the judge's branches, so it also checks that every kind of
// reason was given.
func TestSameAsReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	trials := 3000
	if testing.Short() {
		trials = 300
	}
	seen := map[string]bool{}
	for trial := 0; trial < trials; trial++ {
		query := randomText(rng, rng.IntN(25))
		reference := randomText(rng, rng.IntN(6))
		chunks := make([]string, rng.IntN(12))
		for i := range chunks {
			chunks[i] = randomText(rng, rng.IntN(80))
			if rng.IntN(3) == 0 {
				chunks[i] += " " + reference + " " + randomText(rng, rng.IntN(10))
			}
		}
		p := DefaultParams()
		if trial%2 == 1 {
			p = Params{
				QueryWeight: rng.Float64(), AnswerWeight: rng.Float64(), NameWeight: rng.Float64(), SubjectWeight: rng.Float64(),
				PartialAnswer: rng.Float64(), LeadWords: rng.IntN(10), Alpha: rng.Float64(), Beta: 2 * rng.Float64(),
				MinEvidence: rng.Float64(),
			}
			switch trial % 20 {
			case 1:
				p.MinEvidence = 0
			case 3:
				// Only a NaN floor, which fails every comparison, leads to
				// "has no term of the query or the answer".
				p.MinEvidence = math.NaN()
			}
		}
		checkSame(t, p, query, reference, chunks)
		for _, v := range p.Judge(query, reference, chunks) {
			if !(v.Confidence >= 0 && v.Confidence <= 1) {
				t.Fatalf("confidence %v out of [0, 1] with %+v", v.Confidence, p)
			}
			for _, k := range reasonKinds {
				if strings.Contains(v.Reason, k) {
					seen[k] = true
				}
			}
		}
	}
	for _, k := range reasonKinds {
		if !seen[k] {
			t.Errorf("no generated retrieval gave a reason with %q", k)
		}
	}
}

// FuzzSameAsReference splits its input into a query, a reference and chunks
// at '|' bytes.
func FuzzSameAsReference(f *testing.F) {
	f.Add("What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?|Chief of Protocol|Shirley Temple Black was Chief of Protocol.|Kiss and Tell is a 1945 film.|Meet Corliss Archer")
	f.Add("Which parties?|the parties|Parties: 3,677 seated|İstanbul \xff Straße|K")
	f.Add("|yes|Yes, it is.")
	f.Fuzz(func(t *testing.T, s string) {
		parts := strings.Split(s, "|")
		for len(parts) < 2 {
			parts = append(parts, "")
		}
		checkSame(t, DefaultParams(), parts[0], parts[1], parts[2:])
	})
}

// The query side's tokens are the reference's, field for field.
func TestTokenizeSameAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 5000; trial++ {
		s := randomText(rng, rng.IntN(40))
		limit := MaxQueryRunes
		if trial%3 == 0 {
			limit = rng.IntN(utf8.RuneCountInString(s) + 2)
		}
		got, want := tokenize(nil, s, limit), refTokenize(nil, s, limit)
		if len(got) != len(want) {
			t.Fatalf("%q (%d runes): %d tokens, reference %d", s, limit, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.raw != w.raw || g.word != w.word || g.stem != w.stem || g.upper != w.upper || g.stop != w.stop || g.brk != w.brk {
				t.Fatalf("%q token %d: %+v, reference %+v", s, i, g, w)
			}
		}
	}
}

func TestStemSameAsReference(t *testing.T) {
	for _, w := range append(vocabulary, "ies", "eies", "aies", "sies", "xes", "ss", "s", "es", "ies", "iés", "", "abcs") {
		w = strings.ToLower(w)
		if got, want := stem(w), refStem(w); got != want {
			t.Errorf("stem(%q) = %q, reference %q", w, got, want)
		}
		n, y := stemLen([]byte(w))
		got := w[:n]
		if y {
			got += "y"
		}
		if want := refStem(w); got != want {
			t.Errorf("stemLen(%q) = %q, reference %q", w, got, want)
		}
	}
}

func TestIsStopWordSameAsReference(t *testing.T) {
	words := append([]string{}, vocabulary...)
	for w := range refStopWords {
		words = append(words, w, w+"s", strings.ToUpper(w), w[:len(w)-1])
	}
	for _, w := range words {
		if got, want := IsStopWord(w), refIsStopWord(w); got != want {
			t.Errorf("IsStopWord(%q) = %v, reference %v", w, got, want)
		}
	}
}

// appendFixed must print what fmt prints, infinities included.
func TestAppendFixedIsFmt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	values := []float64{0, math.Copysign(0, -1), 0.005, 0.015, 0.125, 0.995, 99.5, 100, 1e-9, -0.004,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	for range 1000 {
		values = append(values, rng.Float64(), 100*rng.Float64(), rng.NormFloat64()*1e3)
	}
	for _, v := range values {
		for _, prec := range []int{0, 2} {
			if got, want := string(appendFixed(nil, v, prec)), fmt.Sprintf("%.*f", prec, v); got != want {
				t.Errorf("appendFixed(%v, %d) = %q, fmt %q", v, prec, got, want)
			}
		}
	}
}

// appendQuote and appendSubject quote as the reference's quote does.
func TestQuoteSameAsReference(t *testing.T) {
	texts := []string{"", "Paris", strings.Repeat("é", 59), strings.Repeat("é", 60), strings.Repeat("é", 61),
		strings.Repeat("Ab ", 40), "bad\xffbyte", "\xff\xfe run", "a\uFFFD\xffb", "tail\xc3", " spaced\u00a0 out\u2003 "}
	rng := rand.New(rand.NewPCG(2, 2))
	for range 2000 {
		texts = append(texts, randomText(rng, rng.IntN(30)))
	}
	for _, s := range texts {
		want := refQuote(strings.Join(strings.Fields(s), " "))
		if got := string(appendQuoteFields(nil, s)); got != want {
			t.Errorf("appendQuoteFields(%q) = %q, reference %q", s, got, want)
		}
		if got := string(appendQuote(nil, strings.Fields(s))); got != want {
			t.Errorf("appendQuote(%q) = %q, reference %q", s, got, want)
		}
	}
	r := DefaultParams().Prepare("", "")
	for _, words := range []int{1, 3, 8} {
		chunk := strings.Repeat("Ééééééééééé ", words)
		toks := refTokenize(nil, chunk, refMaxChunkRunes)
		raw := make([]string, words)
		for i := range raw {
			raw[i] = toks[i].raw
		}
		want := refQuote(strings.Join(raw, " "))
		if got := string(r.appendSubject(nil, chunk, &chunkInfo{subjectWords: words})); got != want {
			t.Errorf("%d words: %q, reference %q", words, got, want)
		}
	}
}

// A chunk cut by ChunkRunes is judged as the reference judges the text cut
// there.
func TestChunkRunesSameAsCutText(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 500; trial++ {
		query, reference := randomText(rng, 12), randomText(rng, 3)
		chunks := make([]string, 1+rng.IntN(6))
		for i := range chunks {
			chunks[i] = randomText(rng, rng.IntN(60)) + " " + reference + " " + randomText(rng, rng.IntN(60))
		}
		p := DefaultParams()
		p.ChunkRunes = 1 + rng.IntN(300)
		cutChunks := make([]string, len(chunks))
		for i, c := range chunks {
			cutChunks[i] = c
			runes := 0
			for at := range c { // an invalid byte is a rune of its own, as the judge counts
				if runes == p.ChunkRunes {
					cutChunks[i] = c[:at]
					break
				}
				runes++
			}
		}
		got := p.Judge(query, reference, chunks)
		want := refParamsOf(p).Judge(query, reference, cutChunks)
		if diff := sameAsReference(got, want); diff != "" {
			t.Fatalf("ChunkRunes %d differs from cutting the chunks\n%s", p.ChunkRunes, diff)
		}
	}
}
