package lexical

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// wordMask is a chunk's words as one bit per byte: bit j of words[k] is set
// when byte 64k+j belongs to a word by wordReader.next's rules (a '.' or ','
// between two digits included: "3,677"), so that words start at runs of set
// bits, found by counting trailing zeros, and none waits on where the word
// before it ended. high marks the bytes above 0x7f the same way, when the
// chunk has any. It is built eight bytes at a time without a branch per byte
// (asciiWordBytes8); the rare non-ASCII runes are decoded one by one after.
type wordMask struct {
	words, high []uint64
}

// moveMask gathers the high bit of each byte of x into the low eight bits,
// the lowest byte's into bit 0. x must have no other bit set.
func moveMask(x uint64) uint64 {
	return (x >> 7) * 0x0102040810204080 >> 56
}

// wordHighBits returns the block x with the high bit of each byte set when
// the byte is an ASCII letter or digit, as asciiWordBytes8 tells them, and
// the same for the ASCII digits alone.
func wordHighBits(x uint64) (word, digit uint64) {
	const ones = 0x0101010101010101
	const high = ones * 0x80
	v := x &^ high
	folded := v | ones*0x20
	letter := (folded + ones*(0x80-'a')) &^ (folded + ones*(0x7f-'z'))
	digit = (v + ones*(0x80-'0')) &^ (v + ones*(0x7f-'9')) &^ x & high
	return (letter &^ x & high) | digit, digit
}

// build sets m to the words of s, and reports whether s has a byte above
// 0x7f (m.high is then set too).
func (m *wordMask) build(s string) (nonASCII bool) {
	const high = 0x0101010101010101 * 0x80
	n := len(s)
	blocks := n/64 + 1 // one more bit than bytes: a word always ends in it
	if cap(m.words) < blocks {
		m.words = make([]uint64, blocks)
	}
	words := m.words[:blocks]
	m.words = words
	m.high = resize(m.high, blocks)
	highs := m.high
	var hi uint64
	at := 0
	for k := range words[:blocks-1] {
		b := s[at : at+64]
		x0 := binary.LittleEndian.Uint64([]byte(b[0:8]))
		x1 := binary.LittleEndian.Uint64([]byte(b[8:16]))
		x2 := binary.LittleEndian.Uint64([]byte(b[16:24]))
		x3 := binary.LittleEndian.Uint64([]byte(b[24:32]))
		x4 := binary.LittleEndian.Uint64([]byte(b[32:40]))
		x5 := binary.LittleEndian.Uint64([]byte(b[40:48]))
		x6 := binary.LittleEndian.Uint64([]byte(b[48:56]))
		x7 := binary.LittleEndian.Uint64([]byte(b[56:64]))
		h := x0 | x1 | x2 | x3 | x4 | x5 | x6 | x7
		w0, d0 := wordHighBits(x0)
		w1, d1 := wordHighBits(x1)
		w2, d2 := wordHighBits(x2)
		w3, d3 := wordHighBits(x3)
		w4, d4 := wordHighBits(x4)
		w5, d5 := wordHighBits(x5)
		w6, d6 := wordHighBits(x6)
		w7, d7 := wordHighBits(x7)
		w := moveMask(w0) | moveMask(w1)<<8 | moveMask(w2)<<16 | moveMask(w3)<<24 |
			moveMask(w4)<<32 | moveMask(w5)<<40 | moveMask(w6)<<48 | moveMask(w7)<<56
		if d0|d1|d2|d3|d4|d5|d6|d7 != 0 {
			d := moveMask(d0) | moveMask(d1)<<8 | moveMask(d2)<<16 | moveMask(d3)<<24 |
				moveMask(d4)<<32 | moveMask(d5)<<40 | moveMask(d6)<<48 | moveMask(d7)<<56
			w = joinNumbers(s, at, w, d)
		}
		words[k], highs[k] = w, h&high
		hi |= h
		at += 64
	}
	// The last block, shorter than 64 bytes: zero bytes past the end are
	// not word bytes.
	var w, h, d uint64
	for g := 0; at+g < n; g += 8 {
		x := loadBlock8(s, at+g)
		h |= x
		wg, dg := wordHighBits(x)
		w |= moveMask(wg) << g
		d |= moveMask(dg) << g
	}
	if d != 0 {
		w = joinNumbers(s, at, w, d)
	}
	words[blocks-1], highs[blocks-1] = w, h&high
	hi |= h
	if hi&high == 0 {
		return false
	}

	// Non-ASCII runes: the bytes of the letters, digits and marks are word
	// bytes. They are decoded where wordReader.next decodes them, from the
	// first byte above 0x7f after ASCII bytes, one rune after the other.
	// high, so far only telling the blocks that have such bytes, then
	// tells the bytes.
	for k, h := range highs {
		if h == 0 {
			continue
		}
		h = 0
		for g := 0; g < 64 && k*64+g < n; g += 8 {
			h |= moveMask(loadBlock8(s, k*64+g)&high) << g
		}
		highs[k] = h
	}
	for i := nextSet(highs, 0); i < n; i = nextSet(highs, i) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && isWordRune(r) {
			for j := i; j < i+size; j++ {
				words[j>>6] |= 1 << (j & 63)
			}
		}
		i += size
	}
	return true
}

// joinNumbers returns w, the word bytes of the block of s from at, with the
// '.' and ',' between two ASCII digits set too: the scanner then finds a
// number such as "3,677" as one run, as wordReader.next reads it, and needs
// no test of the bytes around each word. d is the block's digits, one bit
// per byte; it is called only for a block that has some.
func joinNumbers(s string, at int, w, d uint64) uint64 {
	// The digits either side of the block.
	before, after := uint64(0), uint64(0)
	if at > 0 && isDigit(s[at-1]) {
		before = 1
	}
	if at+64 < len(s) && isDigit(s[at+64]) {
		after = 1 << 63
	}
	// Bytes that are not word bytes and have a digit on each side.
	for c := ^w & (d<<1 | before) & (d>>1 | after); c != 0; c &= c - 1 {
		g := bits.TrailingZeros64(c)
		if b := s[at+g]; b == '.' || b == ',' {
			w |= 1 << g
		}
	}
	return w
}

// nextSet returns the position of the first bit set in m from bit i on,
// or 64·len(m) or more when there is none.
func nextSet(m []uint64, i int) int {
	k := i >> 6
	if k >= len(m) {
		return i
	}
	if x := m[k] >> (uint(i) & 63); x != 0 {
		return i + bits.TrailingZeros64(x)
	}
	for k++; k < len(m); k++ {
		if m[k] != 0 {
			return k<<6 + bits.TrailingZeros64(m[k])
		}
	}
	return k << 6
}

// nextClear returns the position of the first bit clear in m from bit i
// on; m's last bit must be clear.
func nextClear(m []uint64, i int) int {
	k := i >> 6
	if x := ^m[k] >> (uint(i) & 63); x != 0 {
		return i + bits.TrailingZeros64(x)
	}
	for k++; k < len(m); k++ {
		if m[k] != ^uint64(0) {
			return k<<6 + bits.TrailingZeros64(^m[k])
		}
	}
	return k << 6
}

// anySet reports whether m has a bit set in [i, j).
func anySet(m []uint64, i, j int) bool {
	return nextSet(m, i) < j
}
