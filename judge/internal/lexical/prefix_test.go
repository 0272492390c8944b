package lexical

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A word whose stem or whole is in a Prepared's table passes its prefix
// filter, however short the word or its stem: "xies", whose stem "xy" has
// another prefix, included.
func TestPrefixFilterKeepsTableWords(t *testing.T) {
	words := []string{"xies", "xyies", "abies", "ies", "s", "x", "xs", "xes", "ab", "abs", "parties", "party",
		"İs", "éies", "ǅies", "3,677", "1.5", "films", "film"}
	rng := rand.New(rand.NewPCG(7, 7))
	letters := []string{"a", "b", "i", "e", "s", "y", "o", "u", "é", "İ", "1"}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(letters[rng.IntN(len(letters))])
		}
		if rng.IntN(2) == 0 {
			b.WriteString([]string{"s", "es", "ies"}[rng.IntN(3)])
		}
		words = append(words, b.String())
	}
	for _, w := range words {
		lower := strings.ToLower(w)
		// The reference is the word itself: its stem is a term, and it is
		// the phrase.
		r := DefaultParams().Prepare("", w)
		if r.nTerms == 0 {
			continue // a stop word
		}
		b0, _ := wordBlocks([]byte(lower))
		if !r.filter.has(b0) {
			t.Errorf("%q (stem %q) does not pass the filter", lower, stem(lower))
		}
		for _, other := range []string{stem(lower), lower} {
			r := DefaultParams().Prepare(other, "")
			if r.nTerms > 0 && !r.filter.has(b0) {
				t.Errorf("%q does not pass the filter of %q", lower, other)
			}
		}
	}
}

// isStopBlock says what isStopWord says, for every stop word and its near
// misses.
func TestIsStopBlockIsStopWord(t *testing.T) {
	words := append([]string{}, vocabulary...)
	for _, w := range stopWords {
		words = append(words, w, w+"s", w+"es", w[:len(w)-1], "x"+w, w+w)
	}
	for _, w := range words {
		if w == "" {
			continue // not a word
		}
		lower := []byte(strings.ToLower(w))
		b0, b1 := wordBlocks(lower)
		if got, want := isStopBlock(b0, b1, len(lower)), isStopWord(lower, hashWord(lower)); got != want {
			t.Errorf("isStopBlock(%q) = %v, isStopWord %v", lower, got, want)
		}
	}
}
