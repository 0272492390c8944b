package lexical

// wordTable is a set of lower-cased words (stop words, or a query's term
// stems and the reference's phrase words) with open addressing, looked up by
// a hash the caller computes as it reads the word. It replaces a
// map[string]int on the hottest path of the judge: Go maps cannot be asked
// with a hash already in hand, nor with a stem that is a prefix of a word
// plus "y" without building that string.
//
// A table is built once and then only read, so it is safe for concurrent
// use.
type wordTable struct {
	slots []wordSlot
	// keys holds the words, one after the other: the slots hold no
	// pointer, so that emptying and filling a recycled table neither
	// allocates nor writes anything the garbage collector watches.
	keys []byte
	mask uint64
}

// wordSlot is one entry: its word is keys[at : at+n]. A slot with an empty
// word is free (no word is empty).
type wordSlot struct {
	hash  uint64
	at, n int32
	// term is the index of the term whose stem is key, or -1.
	term int32
	// phrase is the position in the reference phrase's distinct words of the
	// word key, or -1.
	phrase int32
}

// reset empties t and makes it ready for at most n words, reusing its
// slots when there are enough. It is at most half full, so that most
// look-ups of absent words end at the first or second slot.
func (t *wordTable) reset(n int) {
	size := 8
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
	} else {
		t.slots = make([]wordSlot, size)
	}
	t.keys = t.keys[:0]
	t.mask = uint64(size - 1)
}

// key is the word of the slot s.
func (t *wordTable) key(s *wordSlot) []byte { return t.keys[s.at : s.at+s.n] }

// findBytes returns the slot of word w, whose hash is hash, or nil.
func (t *wordTable) findBytes(hash uint64, w []byte) *wordSlot {
	for i := hash & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.n == 0 {
			return nil
		}
		if s.hash == hash && string(t.key(s)) == string(w) {
			return s
		}
	}
}

// insert returns the slot of w, adding it (with no term and no phrase
// position) if absent. The table must have been made for enough words.
func (t *wordTable) insert(hash uint64, w []byte) *wordSlot {
	for i := hash & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.n == 0 {
			*s = wordSlot{hash: hash, at: int32(len(t.keys)), n: int32(len(w)), term: -1, phrase: -1}
			t.keys = append(t.keys, w...)
			return s
		}
		if s.hash == hash && string(t.key(s)) == string(w) {
			return s
		}
	}
}

// hashWord hashes w eight bytes at a time: a multiplication per block
// rather than per byte, as FNV would take. lowerHash computes the same hash
// while it lower-cases a word.
func hashWord[T string | []byte](w T) uint64 {
	h := uint64(hashSeed)
	i := 0
	for ; i+8 <= len(w); i += 8 {
		h = mix(h ^ (uint64(w[i]) | uint64(w[i+1])<<8 | uint64(w[i+2])<<16 | uint64(w[i+3])<<24 |
			uint64(w[i+4])<<32 | uint64(w[i+5])<<40 | uint64(w[i+6])<<48 | uint64(w[i+7])<<56))
	}
	var block uint64
	for j := 0; i+j < len(w); j++ {
		block |= uint64(w[i+j]) << (8 * j)
	}
	return mix(h ^ block ^ uint64(len(w))<<56)
}

const hashSeed = 0x243f6a8885a308d3 // the digits of pi: any constant will do

// mix spreads every bit of x over the high and the low bits, which index the
// table.
func mix(x uint64) uint64 {
	x *= 0x9e3779b97f4a7c15
	return x ^ x>>32
}
