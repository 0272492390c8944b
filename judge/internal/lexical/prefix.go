package lexical

// prefixFilter is a 2,048-bit Bloom filter, with one hash, of the three-byte
// prefixes (lower-cased, zero-padded, the low 24 bits of a little-endian
// block) of a Prepared's term stems and reference words: a chunk's word whose
// prefix is not in it cannot be in the table, and skips stemming, hashing
// and probing. Because "ies" → "y" stemming can change a short word's prefix
// ("xies" → "xy"), a key ending in "y" also adds the prefix of the word it
// would be the stem of.
type prefixFilter [32]uint64

// prefixBit is the filter's bit for a prefix.
func prefixBit(p uint64) uint64 {
	return uint64(uint32(p&0xffffff)*0x9e3779b1) >> (32 - 11)
}

// add adds the prefix of key, and of the word key is the "ies" stem of.
func (f *prefixFilter) add(key []byte) {
	f.addPrefix(prefixOf(key))
	if n := len(key); n > 0 && key[n-1] == 'y' && n < 4 {
		// Only the first three bytes of key[:n-1] + "ies" matter.
		f.addPrefix(prefixOf(key[:n-1]) | uint64('i')<<(8*(n-1)) | uint64('e')<<(8*n)&0xffffff)
	}
}

func (f *prefixFilter) addPrefix(p uint64) {
	b := prefixBit(p)
	f[b>>6] |= 1 << (b & 63)
}

// has reports whether the word whose first lower-cased block is b0 may be in
// the filter's table.
func (f *prefixFilter) has(b0 uint64) bool {
	b := prefixBit(b0)
	return f[b>>6]&(1<<(b&63)) != 0
}

// prefixOf is the prefix of the lower-cased word w.
func prefixOf[T string | []byte](w T) uint64 {
	var p uint64
	for i := 0; i < len(w) && i < 3; i++ {
		p |= uint64(w[i]) << (8 * i)
	}
	return p
}
