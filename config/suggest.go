package config

import "strings"

// This file suggests what a misspelt name was meant to be, for the
// messages that refuse an unknown key or provider.

// closest is the candidates nearest to s, if near enough to be a slip of
// the keyboard (at most 2 edits, and fewer than half of s): all of them
// when several are as near, or none.
func closest(s string, candidates []string) []string {
	var best []string
	bestDist := 3
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), c)
		switch {
		case 2*d >= len(s) || d > bestDist:
		case d < bestDist:
			best, bestDist = []string{c}, d
		default:
			best = append(best, c)
		}
	}
	return best
}

// editDistance is the number of single-character insertions, deletions,
// substitutions and swaps of neighbours that turn a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
