package judge

import (
	"strings"
	"unicode/utf8"
)

// TruncateRunes cuts s to at most n runes, on a rune boundary, and replaces
// invalid UTF-8 so that what reaches the prompt, the cache key and the JSON
// encoder is the same text. It is what a judge is sent of a text under the
// engine's MaxChunkChars.
func TruncateRunes(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if n <= 0 || len(s) <= n {
		return s // n bytes of valid UTF-8 hold at most n runes
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
