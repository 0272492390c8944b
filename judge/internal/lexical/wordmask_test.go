package lexical

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The words of a chunk, as scan finds them in its mask, runs of set bits,
// are wordReader.next's, numbers such as "3,677" included.
func TestWordMaskIsWordReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	texts := []string{"", "a", "3,677.5 x", "İstanbul – Straße", strings.Repeat("word ", 40) + "1.5"}
	for range 2000 {
		texts = append(texts, randomText(rng, rng.IntN(60)))
	}
	// Numbers across the blocks of 64 bytes, and blocks with digits but no
	// number.
	for pad := 56; pad < 72; pad++ {
		for _, n := range []string{"1.5", "3,677.25", "12.a", "a.1", "1. 2", "1..2", "7,", ".5"} {
			texts = append(texts, strings.Repeat("x", pad)+n+" y", strings.Repeat("é", pad/2)+n)
		}
	}
	for range 500 {
		texts = append(texts, randomText(rng, 60+rng.IntN(200)))
	}
	var m wordMask
	for _, s := range texts {
		m.build(s)
		var got [][2]int
		for i := nextSet(m.words, 0); i < len(s); i = nextSet(m.words, i) {
			end := nextClear(m.words, i)
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
