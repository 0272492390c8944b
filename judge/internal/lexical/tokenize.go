package lexical

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Words are maximal runs of letters, digits and combining marks. A '.' or
// ',' between two ASCII digits stays inside the word, so "3,677" and "1.5"
// are one word on both the reference and the chunk side. Invalid UTF-8 is a
// separator, never an error.
//
// Two readers share these rules: tokenize, which keeps every word of the
// query and the reference as a token, and the chunk scanner (scan.go), which
// looks each word up as it goes and keeps nothing. Both walk the text with a
// wordReader, so that they cannot disagree on where words are.

// token is one word of the query or the reference. It holds no pointer,
// only where its texts are, so that tokenizing into a recycled tokenizer
// allocates no strings and writes nothing the garbage collector watches.
type token struct {
	// raw is where the word is in the text, as written, for quoting in
	// reasons.
	raw span
	// word is the lower-cased form, used for phrase containment, and stem
	// is word after light stemming, used for term matching; both are in the
	// tokenizer's lower buffer.
	word, stem span
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

// span is where a token's text is: s[start:end] of a text or a buffer.
type span struct{ start, end int }

// rawIn is the token as written in s, the text it was read from.
func (t *token) rawIn(s string) string { return s[t.raw.start:t.raw.end] }

// tokenizer holds tokenize's buffers, for a caller to reuse.
type tokenizer struct {
	toks  []token
	lower []byte // every token's word, and the stems that are not a prefix of it
}

// word is the token's lower-cased word.
func (z *tokenizer) word(t *token) []byte { return z.lower[t.word.start:t.word.end] }

// stem is the token's stem.
func (z *tokenizer) stem(t *token) []byte { return z.lower[t.stem.start:t.stem.end] }

// tokenize splits s into tokens. Only the first maxRunes runes of s are
// read, which bounds the work spent on a huge text. The tokens live in z's
// buffers and are valid until the next call; their texts are in s and in
// z.lower.
func (z *tokenizer) tokenize(s string, maxRunes int) []token {
	s = cut(s, maxRunes)
	toks, lower := z.toks[:0], z.lower[:0]
	w := wordReader{s: s}
	for {
		start, end, brk, ascii := w.next()
		if start < 0 {
			break
		}
		raw := s[start:end]
		at := len(lower)
		lower = appendLower(lower, raw, ascii)
		word := lower[at:]
		b0, b1 := wordBlocks(word)
		t := token{
			raw:   span{start, end},
			word:  span{at, len(lower)},
			upper: startsUpper(raw, ascii),
			stop:  isStopBlock(b0, b1, len(word)),
			brk:   brk,
		}
		switch k, y := stemLen(word); {
		case y:
			lower = append(lower, word[:k]...)
			lower = append(lower, 'y')
			t.stem = span{len(lower) - k - 1, len(lower)}
		default:
			t.stem = span{at, at + k}
		}
		toks = append(toks, t)
	}
	z.toks, z.lower = toks, lower
	return toks
}

// cut returns the first maxRunes runes of s.
func cut(s string, maxRunes int) string {
	if len(s) <= maxRunes {
		return s // no more runes than bytes
	}
	end, runes := 0, 0
	for end < len(s) && runes < maxRunes {
		if s[end] < utf8.RuneSelf {
			end++
		} else {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
		}
		runes++
	}
	return s[:end]
}

// wordReader yields the words of a text one at a time.
type wordReader struct {
	s   string
	pos int // where the next word is looked for
}

// next returns the next word, s[start:end], whether punctuation separates it
// from the previous word (see token.brk), and whether it is all ASCII. At
// the end of the text start is -1.
//
// A word ends at the separator after it, which is left for the next call:
// that separator is what breaks (or not) the word after.
func (w *wordReader) next() (start, end int, brk, ascii bool) {
	s := w.s
	start, ascii = -1, true
	i := w.pos
	for i < len(s) {
		switch asciiClass[s[i]] {
		case asciiWord:
			if start < 0 {
				start = i
			}
			i += asciiWordBytes(s, i)
			continue
		case asciiNumberMark:
			if start >= 0 && betweenDigits(s, i) {
				i++ // inside a number
				continue
			}
			if start >= 0 {
				w.pos = i
				return start, i, brk, ascii
			}
			brk = true
			i++
			continue
		case asciiBreak:
			if start >= 0 {
				w.pos = i
				return start, i, brk, ascii
			}
			brk = true
			i++
			continue
		case asciiJoin:
			if start >= 0 {
				w.pos = i
				return start, i, brk, ascii
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError: // an invalid byte, or a literal U+FFFD
			if start >= 0 {
				w.pos = i
				return start, i, brk, ascii
			}
			brk = true
		case isWordRune(r):
			if start < 0 {
				start = i
			}
			ascii = false
		case start >= 0:
			w.pos = i
			return start, i, brk, ascii
		case !unicode.IsSpace(r) && !isJoiner(r):
			brk = true
		}
		i += size
	}
	w.pos = i
	if start < 0 {
		return -1, -1, brk, ascii
	}
	return start, i, brk, ascii
}

// asciiWordBytes returns how many bytes from s[i], an ASCII letter or
// digit, are ASCII letters or digits, looking at eight at a time: most words
// are read in one step instead of one per byte. It stops at the first other
// byte or at the end of the block (the caller reads on from there).
func asciiWordBytes(s string, i int) int {
	if i+8 > len(s) {
		return 1
	}
	return max(asciiWordBytes8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))), 1)
}

// asciiWordBytes8 returns how many of the eight bytes of the little-endian
// block x, from its lowest, are ASCII letters or digits.
func asciiWordBytes8(x uint64) int {
	const ones = 0x0101010101010101
	const high = ones * 0x80
	// With no byte above 0x7f, adding at most 0x7f carries into no other
	// byte; bytes above 0x7f are masked out of the result below.
	v := x &^ high
	folded := v | ones*0x20 // 'A'…'Z' to 'a'…'z'; no other byte lands there
	letter := (folded + ones*(0x80-'a')) &^ (folded + ones*(0x7f-'z'))
	digit := (v + ones*(0x80-'0')) &^ (v + ones*(0x7f-'9'))
	word := (letter | digit) &^ x & high
	return bits.TrailingZeros64(^word&high) / 8
}

// The classes of bytes: for ASCII, what the byte does to words; every byte
// of a multi-byte rune is notASCII and the rune is decoded. The ASCII
// classes are derived from the predicates wordReader.next applies to
// decoded runes (isWordRune, unicode.IsSpace, isJoiner), so that its two
// paths cannot disagree on what separates words.
const (
	notASCII        = iota
	asciiWord       // a letter or digit
	asciiJoin       // white space or a joiner: ends a word, breaks no name
	asciiBreak      // other punctuation: ends a word and breaks names
	asciiNumberMark // '.' or ',': inside a number, otherwise a break
)

var asciiClass = func() (c [256]uint8) {
	for b := 0; b < utf8.RuneSelf; b++ {
		switch {
		case isWordRune(rune(b)):
			c[b] = asciiWord
		case b == '.' || b == ',':
			c[b] = asciiNumberMark
		case unicode.IsSpace(rune(b)) || isJoiner(rune(b)):
			c[b] = asciiJoin
		default:
			c[b] = asciiBreak
		}
	}
	return c
}()

// appendLower appends the lower-case form of the word raw (as
// strings.ToLower would give it) to dst.
func appendLower(dst []byte, raw string, ascii bool) []byte {
	if ascii {
		for i := 0; i < len(raw); i++ {
			dst = append(dst, asciiLower[raw[i]])
		}
		return dst
	}
	for _, r := range raw {
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// lowerHash sets *dst to the lower-case form of the word raw and returns its
// hashWord. An ASCII word is lower-cased and hashed eight bytes at a time;
// text is what raw was cut from, read past raw's end (and masked) to load
// whole blocks.
func lowerHash(dst *[]byte, text string, start, end int, ascii bool) uint64 {
	raw := text[start:end]
	if !ascii {
		*dst = appendLower((*dst)[:0], raw, false)
		return hashWord(*dst)
	}
	n := len(raw)
	b := *dst
	if cap(b) < n+8 {
		b = make([]byte, 0, 2*n+8)
	}
	b = b[:n+8]
	h := uint64(hashSeed)
	for i := 0; ; i += 8 {
		var block uint64
		if start+i+8 <= len(text) {
			block = binary.LittleEndian.Uint64([]byte(text[start+i : start+i+8]))
		} else {
			for j := 0; start+i+j < len(text) && j < 8; j++ {
				block |= uint64(text[start+i+j]) << (8 * j)
			}
		}
		if left := n - i; left < 8 {
			block &= 1<<(8*left) - 1 // the bytes after the word
			block = lowerASCII(block)
			binary.LittleEndian.PutUint64(b[i:], block)
			*dst = b[:n]
			return mix(h ^ block ^ uint64(n)<<56)
		}
		block = lowerASCII(block)
		binary.LittleEndian.PutUint64(b[i:], block)
		h = mix(h ^ block)
	}
}

// lowerASCII lower-cases the eight ASCII bytes of x at once: the bytes in
// 'A'…'Z' are those that adding 0x80-'A' carries into the high bit and
// adding 0x80-'Z'-1 does not; no byte carries into the next, as none
// exceeds 0x7f.
func lowerASCII(x uint64) uint64 {
	const ones = 0x0101010101010101
	geA := x + ones*(0x80-'A')
	gtZ := x + ones*(0x80-'Z'-1)
	upper := geA &^ gtZ & (ones * 0x80)
	return x | upper>>2 // 0x80>>2 is 0x20, 'a'-'A'
}

var asciiLower = func() (l [256]byte) {
	for i := range l {
		l[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			l[i] += 'a' - 'A'
		}
	}
	return l
}()

// startsUpper reports whether the word raw starts with an upper-case letter
// or a digit.
func startsUpper(raw string, ascii bool) bool {
	if c := raw[0]; ascii || c < utf8.RuneSelf {
		return 'A' <= c && c <= 'Z' || isDigit(c)
	}
	return startsUpperRune(raw)
}

// startsUpperRune is startsUpper for a word that starts with a non-ASCII
// rune, apart so that startsUpper is inlined.
func startsUpperRune(raw string) bool {
	first, _ := utf8.DecodeRuneInString(raw)
	return unicode.IsUpper(first) || unicode.IsDigit(first)
}

func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWordByte(byte(r))
	}
	if generalPunctuation <= r && r <= generalPunctuationEnd {
		// Dashes, quotes, spaces and other marks: none is a letter, a
		// digit or a combining mark (TestGeneralPunctuationIsNoWordRune).
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// The General Punctuation block, where most of the non-ASCII separators of
// English text are.
const generalPunctuation, generalPunctuationEnd = 0x2000, 0x206f

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

// stemLen strips English plural endings, following Harman's S-stemmer
// ("parties" → "party", "films" → "film"; "glass" and "Paris" stay): a full
// Porter stemmer conflates names and unrelated words more often than it
// helps on short queries, while "which films" / "the film" is common. So
// that no string is built, the stem of the lower-cased word w is w[:n],
// followed by "y" when y is true ("parties" → "part" + "y").
func stemLen[T string | []byte](w T) (n int, y bool) {
	n = len(w)
	if n <= 3 || w[n-1] != 's' {
		return n, false
	}
	// w ends in "s" and has at least 4 bytes.
	switch a, b, c := w[n-4], w[n-3], w[n-2]; {
	case b == 'i' && c == 'e' && a != 'e' && a != 'a': // "-ies", not "-eies", "-aies"
		return n - 3, true
	case c == 'e' && b != 'a' && b != 'e' && b != 'o': // "-es", not "-aes", "-ees", "-oes"
		return n - 1, false
	case c == 'u' || c == 's' || c == 'i': // "-us", "-ss", "-is"
		return n, false
	}
	return n - 1, false
}
