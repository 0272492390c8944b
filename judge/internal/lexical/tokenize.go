package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one word of a text.
type token struct {
	// raw is the word as written, for quoting in reasons.
	raw string
	// word is the lower-cased form, used for phrase containment.
	word string
	// stem is word after light stemming, used for term matching.
	stem string
	// upper is true when the word starts with an upper-case letter or a
	// digit: the cue for names, titles and dates.
	upper bool
	// stop is true for English stop words.
	stop bool
	// brk is true when punctuation other than white space, hyphens,
	// apostrophes and quotes separates the word from the previous one. Names
	// do not run across such breaks ("Shirley Temple: Shirley Temple Black
	// (April …" has the names "Shirley Temple" and "Shirley Temple Black"),
	// but they do run across quotes (Terrence "Uncle Terry" Richardson).
	brk bool
}

// tokenize splits s into words: maximal runs of letters, digits and
// combining marks. A '.' or ',' between two ASCII digits stays inside the
// word, so "3,677" and "1.5" are one token on both the reference and the chunk
// side. Invalid UTF-8 is a separator, never an error. Only the first maxRunes
// runes of s are read, which bounds the work spent on a huge text. The
// tokens are appended to dst[:0], so that a caller can reuse one buffer.
func tokenize(dst []token, s string, maxRunes int) []token {
	// Find the end of the text to read and whether it is all ASCII, the
	// common case, which is lower-cased in one go: its words' lower-case
	// forms are then slices of one string rather than strings of their own.
	end, runes, ascii := 0, 0, true
	for end < len(s) && runes < maxRunes {
		if s[end] < utf8.RuneSelf {
			end++
		} else {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
			ascii = false
		}
		runes++
	}
	s = s[:end]
	lower := ""
	if ascii {
		lower = strings.ToLower(s) // s itself, without a copy, when already lower case
	}

	toks := dst[:0]
	if want := len(s)/5 + 1; cap(toks) < want {
		toks = make([]token, 0, want) // about one word per 5-6 bytes of English
	}
	start := -1 // byte offset of the word being read; -1 between words
	brk := false
	flush := func(end int) {
		if start < 0 {
			return
		}
		raw := s[start:end]
		var w string
		var first rune
		if ascii {
			w, first = lower[start:end], rune(raw[0])
		} else {
			w = strings.ToLower(raw) // raw itself when already lower case
			first, _ = utf8.DecodeRuneInString(raw)
		}
		toks = append(toks, token{
			raw:   raw,
			word:  w,
			stem:  stem(w),
			upper: unicode.IsUpper(first) || unicode.IsDigit(first),
			stop:  IsStopWord(w),
			brk:   brk,
		})
		start, brk = -1, false
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r == utf8.RuneError: // an invalid byte, or a literal U+FFFD
			flush(i)
			brk = true
		case isWordRune(r):
			if start < 0 {
				start = i
			}
		case (r == '.' || r == ',') && start >= 0 && betweenDigits(s, i):
			// inside a number
		default:
			flush(i)
			if !unicode.IsSpace(r) && !isJoiner(r) {
				brk = true
			}
		}
		i += size
	}
	flush(len(s))
	return toks
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// isJoiner reports punctuation that separates words without ending a name.
func isJoiner(r rune) bool {
	switch r {
	case '-', '\u2010', '\u2011', // hyphens: "Hork-Bajir"
		'\'', '\u2018', '\u2019', // apostrophes: "Hollywood's"
		'"', '\u201c', '\u201d': // quotes: Terrence "Uncle Terry" Richardson
		return true
	}
	return false
}

// betweenDigits reports whether the byte at i has an ASCII digit on each side.
func betweenDigits(s string, i int) bool {
	return i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1])
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// stem strips English plural endings, following Harman's S-stemmer:
// "parties" → "party", "films" → "film", "heroes" → "heroe"; "glass",
// "campus" and "Paris" stay. It is deliberately light: a full Porter stemmer
// conflates names and unrelated words more often than it helps on short
// queries, while singular/plural mismatches between question and passage are
// common ("which films" / "the film").
func stem(w string) string {
	n := len(w)
	if n <= 3 || w[n-1] != 's' {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:n-1]
	case strings.HasSuffix(w, "us") || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "is"):
		return w
	}
	return w[:n-1]
}
