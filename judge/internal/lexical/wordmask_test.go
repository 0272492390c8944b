package lexical

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The words of a chunk, as scan finds them in its mask: runs of set bits,
// a run that follows a '.' or ',' between two digits continuing the word
// before it, are wordReader.next's.
func TestWordMaskIsWordReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	texts := []string{"", "a", "3,677.5 x", "İstanbul – Straße", strings.Repeat("word ", 40) + "1.5"}
	for range 2000 {
		texts = append(texts, randomText(rng, rng.IntN(60)))
	}
	var m wordMask
	for _, s := range texts {
		m.build(s)
		var got [][2]int
		for i := nextSet(m.words, 0); i < len(s); i = nextSet(m.words, i) {
			end := nextClear(m.words, i)
			for end < len(s) && (s[end] == '.' || s[end] == ',') && betweenDigits(s, end) {
				end = nextClear(m.words, end+1)
			}
			got = append(got, [2]int{i, end})
			i = end
		}
		var want [][2]int
		w := wordReader{s: s}
		for {
			start, end, _, _ := w.next()
			if start < 0 {
				break
			}
			want = append(want, [2]int{start, end})
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d words, wordReader %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: word %d is %q, wordReader's %q", s, i, s[got[i][0]:got[i][1]], s[want[i][0]:want[i][1]])
			}
		}
	}
}
