package evalset

import (
	"strings"
	"unicode"
)

// VerdictFunc judges the chunks of one retrieval, returning one relevance
// verdict per chunk in rank order: the simplest shape of a judge, which the
// naive baseline and in-process judges take.
type VerdictFunc func(query, reference string, chunks []string) ([]bool, error)

// NaiveThreshold is the threshold of the naive baseline: "at least half of
// the question and answer words appear in the chunk", the round number a
// first attempt would pick. It is not tuned.
const NaiveThreshold = 0.5

// Naive is the baseline a lexical judge has to beat: a chunk is relevant iff
// at least threshold of the distinct non-stop words of query and reference
// (lower-cased, split on anything that is not a letter or digit, unstemmed)
// occur in it. With no such words nothing is relevant.
//
// It is written out here rather than borrowed from the judge under test so
// that improving that judge's tokeniser cannot silently move the baseline.
func Naive(threshold float64) VerdictFunc {
	return func(query, reference string, chunks []string) ([]bool, error) {
		want := map[string]struct{}{}
		for _, w := range naiveWords(query + " " + reference) {
			if _, stop := naiveStopWords[w]; !stop {
				want[w] = struct{}{}
			}
		}
		out := make([]bool, len(chunks))
		if len(want) == 0 {
			return out, nil
		}
		for i, c := range chunks {
			have := map[string]struct{}{}
			for _, w := range naiveWords(c) {
				have[w] = struct{}{}
			}
			found := 0
			for w := range want {
				if _, ok := have[w]; ok {
					found++
				}
			}
			out[i] = float64(found) >= threshold*float64(len(want))
		}
		return out, nil
	}
}

func naiveWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// naiveStopWords is the NLTK English stop-word list.
var naiveStopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself
		yourselves he him his himself she her hers herself it its itself they them their theirs
		themselves what which who whom this that these those am is are was were be been being have
		has had having do does did doing a an the and but if or because as until while of at by for
		with about against between into through during before after above below to from up down in
		out on off over under again further then once here there when where why how all any both
		each few more most other some such no nor not only own same so than too very s t can will
		just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
		mightn mustn needn shan shouldn wasn weren won wouldn`) {
		m[w] = struct{}{}
	}
	return m
}()
