package spanreader

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The readers take chunks, queries and answers out of JSON that spans carry
// as strings. They used to json.Unmarshal each nested object they looked
// into, re-parsing the rest of the text at every level: a 136 KiB output
// nested 10,000 deep cost seconds of CPU and a gigabyte of memory on the
// path every span takes. The scanner below reads a JSON text once, front to
// back, validating it as encoding/json does (RFC 8259) and handing the
// finders in jsonfind.go the raw tokens they ask for. Its work is linear in
// the text, its memory is its call stack, at most maxNesting frames deep, and
// it allocates nothing: strings are decoded only when a finder keeps one.

// maxNesting bounds how deep arrays and objects may nest. Deeper text is
// malformed to the readers (encoding/json allows 10,000 levels; no
// instrumentation library nests documents or messages anywhere near 64).
const maxNesting = 64

// scanner reads one JSON text. Its position only moves forward, so the work
// of a scan is the distance it moved, which scanCost lets tests add up.
type scanner struct {
	s     string
	i     int
	depth int
	// bad is set when more finds a malformed separator.
	bad bool
}

// scanCost, when set (by tests), is told how many bytes each scan moved
// over: the total over a call bounds the parsing work it did.
var scanCost func(bytes int)

func newScanner(s string) scanner { return scanner{s: s} }

// done reports the scan's work to scanCost.
func (sc *scanner) done() {
	if scanCost != nil {
		scanCost(sc.i)
	}
}

// ws skips JSON whitespace.
func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace, 0 at the end of the text.
func (sc *scanner) peek() byte {
	sc.ws()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// end reports whether only whitespace is left: a JSON text is one value.
func (sc *scanner) end() bool {
	sc.ws()
	return sc.i == len(sc.s)
}

// str reads a string token at the position and returns it with its quotes.
// Escapes are checked, not decoded; bytes that are not UTF-8 are accepted,
// as encoding/json accepts them (and decodes them to U+FFFD).
func (sc *scanner) str() (raw string, ok bool) {
	start := sc.i
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false
	}
	sc.i++
	for {
		sc.i = plainRun(sc.s, sc.i)
		if sc.i >= len(sc.s) {
			return "", false
		}
		switch sc.s[sc.i] {
		case '"':
			sc.i++
			return sc.s[start:sc.i], true
		case '\\':
			if !sc.escape() {
				return "", false
			}
		default: // a control character
			return "", false
		}
	}
}

// plainRun is the index of the first byte at or after i that ends a run of
// plain string content: a quote, a backslash or a control character. It
// tests eight bytes at a time (most of a JSON text is string content).
func plainRun(s string, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		// A byte below 0x20, or equal to '"' or '\\', sets its high bit
		// in ends. A borrow can set the bits of bytes above the first such
		// byte too, never below it: the lowest bit set is exact.
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		ends := (w-ones*0x20)&^w&highs | (quote-ones)&^quote&highs | (backslash-ones)&^backslash&highs
		if ends != 0 {
			return i + bits.TrailingZeros64(ends)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// load64 reads eight bytes of s, little-endian (one load on the platforms
// Go runs the collector on).
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func (sc *scanner) escape() bool {
	sc.i++ // the backslash
	if sc.i >= len(sc.s) {
		return false
	}
	switch sc.s[sc.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		sc.i++
		return true
	case 'u':
		if sc.i+5 > len(sc.s) || hex4(sc.s[sc.i+1:sc.i+5]) < 0 {
			return false
		}
		sc.i += 5
		return true
	}
	return false
}

func hex4(s string) rune {
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *scanner) number() bool {
	s, i := sc.s, sc.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(s, i); j > i {
			i = j
		} else {
			return false
		}
	}
	sc.i = i
	return true
}

func digits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

func (sc *scanner) literal(word string) bool {
	if !strings.HasPrefix(sc.s[sc.i:], word) {
		return false
	}
	sc.i += len(word)
	return true
}

// skip reads over one value, checking it.
func (sc *scanner) skip() bool {
	switch sc.peek() {
	case '"':
		_, ok := sc.str()
		return ok
	case '{':
		if !sc.open('{') {
			return false
		}
		for first := true; sc.more('}', &first); {
			if _, ok := sc.key(); !ok || !sc.skip() {
				return false
			}
		}
		return !sc.bad
	case '[':
		if !sc.open('[') {
			return false
		}
		for first := true; sc.more(']', &first); {
			if !sc.skip() {
				return false
			}
		}
		return !sc.bad
	case 't':
		return sc.literal("true")
	case 'f':
		return sc.literal("false")
	case 'n':
		return sc.literal("null")
	}
	return sc.number()
}

// span reads over one value and returns its text.
func (sc *scanner) span() (string, bool) {
	sc.ws()
	start := sc.i
	ok := sc.skip()
	return sc.s[start:sc.i], ok
}

// open enters the array or object whose bracket is next, refusing to nest
// deeper than maxNesting. Its members are then read with more:
//
//	if !sc.open('[') { return false }
//	for first := true; sc.more(']', &first); {
//		... read one member ...
//	}
//	if sc.bad { return false }
func (sc *scanner) open(bracket byte) bool {
	if sc.peek() != bracket || sc.depth >= maxNesting {
		return false
	}
	sc.i++
	sc.depth++
	return true
}

// more reports whether another member of the open array or object follows,
// and moves over the comma before it. At the closing bracket it leaves the
// container and reports false; so it does when the separator is wrong, and
// then sets bad.
func (sc *scanner) more(closing byte, first *bool) bool {
	c := sc.peek()
	switch {
	case c == closing:
		sc.i++
		sc.depth--
		return false
	case *first:
		*first = false
		return true
	case c == ',':
		sc.i++
		return true
	}
	sc.bad = true
	return false
}

// key reads an object member's name and the colon after it; the raw name
// keeps its quotes and escapes (see keyIs).
func (sc *scanner) key() (string, bool) {
	sc.ws()
	raw, ok := sc.str()
	if !ok || sc.peek() != ':' {
		return "", false
	}
	sc.i++
	return raw, true
}

// The names finders look for are ASCII. A raw name equals one when its bytes
// do, or, if it has escapes, when its decoded text does; decoding is done
// rune by rune against the name, so it stops at the first difference and
// allocates nothing.

// keyIs reports whether the string token raw decodes to name exactly, as a
// key of a map decoded by encoding/json would.
func keyIs(raw, name string) bool {
	body := raw[1 : len(raw)-1]
	if body == name {
		return true
	}
	return strings.IndexByte(body, '\\') >= 0 && decodedMatches(body, name, false)
}

// keyFolds reports whether the string token raw matches name the way
// encoding/json matches a struct field: exactly or, failing that, under
// Unicode case folding.
func keyFolds(raw, name string) bool {
	body := raw[1 : len(raw)-1]
	if len(body) == len(name) && strings.EqualFold(body, name) {
		return true
	}
	return decodedMatches(body, name, true)
}

// decodedMatches decodes body (a string token without its quotes) as
// encoding/json does and compares it with the ASCII name.
func decodedMatches(body, name string, fold bool) bool {
	n := 0 // bytes of name matched
	for i := 0; i < len(body); {
		var r rune
		r, i = decodedRune(body, i) // an invalid byte is U+FFFD, which matches no ASCII
		if n == len(name) || !runeMatches(r, name[n], fold) {
			return false
		}
		n++
	}
	return n == len(name)
}

// decodedRune decodes the character at body[i] of a checked string token's
// body, and returns the index after it. Bytes that are not UTF-8 are
// U+FFFD, as encoding/json decodes them.
func decodedRune(body string, i int) (rune, int) {
	switch c := body[i]; {
	case c == '\\':
		return decodeEscape(body, i)
	case c < utf8.RuneSelf:
		return rune(c), i + 1
	}
	r, size := utf8.DecodeRuneInString(body[i:])
	return r, i + size
}

// decodeEscape decodes the escape at body[i] (a backslash), which the
// scanner has checked, and returns the rune and the index after it. A \u
// escape that is half of a surrogate pair without its other half is U+FFFD.
func decodeEscape(body string, i int) (rune, int) {
	switch c := body[i+1]; c {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r := hex4(body[i+2 : i+6])
		i += 6
		if !utf16.IsSurrogate(r) {
			return r, i
		}
		if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
			if r2 := hex4(body[i+2 : i+6]); r2 >= 0 {
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					return dec, i + 6
				}
			}
		}
		return unicode.ReplacementChar, i
	default: // " \\ /
		return rune(c), i + 2
	}
}

// runeMatches compares a decoded rune with one byte of an ASCII name.
func runeMatches(r rune, b byte, fold bool) bool {
	if r == rune(b) {
		return true
	}
	if !fold {
		return false
	}
	// Walk r's case-folding orbit (s, S, ſ; k, K, K) looking for b.
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == rune(b) {
			return true
		}
	}
	return false
}

// decodeString is the text of a string token, decoded as encoding/json
// decodes it. A token without escapes and in valid UTF-8 is its own text:
// the result shares the attribute's memory rather than copying it. Others
// are measured, then decoded into one allocation of the exact size.
func decodeString(raw string) string {
	body := raw[1 : len(raw)-1]
	if strings.IndexByte(body, '\\') < 0 && utf8.ValidString(body) {
		return body
	}
	n := 0
	for i := 0; i < len(body); {
		var r rune
		r, i = decodedRune(body, i)
		n += utf8.RuneLen(r)
	}
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < len(body); {
		var r rune
		r, i = decodedRune(body, i)
		b.WriteRune(r)
	}
	return b.String()
}

// nonEmpty reports whether a string token decodes to a non-empty text:
// every escape and every byte decodes to at least one byte.
func nonEmpty(raw string) bool { return len(raw) > 2 }
