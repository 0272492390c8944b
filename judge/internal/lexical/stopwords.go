package lexical

// stopWords is a standard English stop-word list (the NLTK list, plus the
// single letters left by splitting contractions and possessives, and a few
// question fillers). Question words are included: they say what kind of
// answer is wanted, not what it is about.
var stopWords = []string{
	"a", "about", "above", "after", "again", "against", "ain", "all", "also", "am", "an",
	"and", "any", "are", "aren", "as", "at", "be", "because", "been", "before", "being",
	"below", "between", "both", "but", "by", "can", "could", "couldn", "d", "did", "didn",
	"do", "does", "doesn", "doing", "don", "down", "during", "each", "either", "few", "for",
	"from", "further", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "her",
	"here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
	"isn", "it", "its", "itself", "just", "ll", "m", "ma", "me", "might", "more", "most",
	"must", "my", "myself", "neither", "no", "nor", "not", "now", "o", "of", "off", "on",
	"once", "one", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
	"re", "s", "same", "shall", "she", "should", "shouldn", "so", "some", "such", "t",
	"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there",
	"these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "ve",
	"very", "was", "wasn", "we", "were", "weren", "what", "whatever", "when", "where",
	"whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "won",
	"would", "wouldn", "y", "yes", "you", "your", "yours", "yourself", "yourselves",
}

// stopTable is stopWords as a hash set looked up with the hash every word
// gets anyway for the term table. It holds only hashes (4 KB, half of the
// slots free), so that the probes of the ~half of all words that are stop
// words stay in cache; a hash that matches is confirmed against the word.
var stopTable = func() (t struct {
	hashes [512]uint64
	words  [512]string
}) {
	for _, w := range stopWords {
		h := hashWord(w)
		if h == 0 {
			panic("lexical: a stop word hashes to 0, the free slot")
		}
		i := h & uint64(len(t.hashes)-1)
		for t.hashes[i] != 0 {
			i = (i + 1) & uint64(len(t.hashes)-1)
		}
		t.hashes[i], t.words[i] = h, w
	}
	return t
}()

// maxStopWordLen is the length in bytes of the longest stop word.
const maxStopWordLen = len("yourselves")

// isStopWord reports whether the lower-cased word w, whose hashWord is hash,
// is an English stop word.
func isStopWord(w []byte, hash uint64) bool {
	if len(w) > maxStopWordLen {
		return false
	}
	const mask = uint64(len(stopTable.hashes) - 1)
	for i := hash & mask; stopTable.hashes[i] != 0; i = (i + 1) & mask {
		if stopTable.hashes[i] == hash && stopTable.words[i] == string(w) {
			return true
		}
	}
	return false
}

// stopBlocks is stopWords keyed by their bytes rather than by hashWord, for
// the chunk scanner, which reads a word's first sixteen lower-cased bytes as
// two little-endian blocks (zero past the word's end) and so needs neither
// the word in a buffer nor its full hash to know whether it is a stop word.
// No word holds a zero byte, so the two blocks and the length are the word.
// 512 slots of 16 bytes, less than a third of them used: a word that is not
// a stop word nearly always ends its probe at the first slot.
var stopBlocks = func() (t [512][2]uint64) {
	for _, w := range stopWords {
		var b [2]uint64
		for i := 0; i < len(w); i++ {
			b[i/8] |= uint64(w[i]) << (8 * (i % 8))
		}
		i := stopBlockSlot(b[0], b[1])
		for t[i][0] != 0 {
			i = (i + 1) & (len(t) - 1)
		}
		t[i] = b
	}
	return t
}()

// stopBlockSlot is where the word with blocks b0 and b1 is looked for in
// stopBlocks.
func stopBlockSlot(b0, b1 uint64) int {
	return int((b0 ^ b1*0xff51afd7ed558ccd) * 0x9e3779b97f4a7c15 >> (64 - 9))
}

// isStopBlock reports whether the lower-cased word (never empty) of n bytes whose first
// sixteen bytes are the blocks b0 and b1 (see stopBlocks) is a stop word.
func isStopBlock(b0, b1 uint64, n int) bool {
	if n > maxStopWordLen {
		return false
	}
	for i := stopBlockSlot(b0, b1); ; i = (i + 1) & (len(stopBlocks) - 1) {
		s := &stopBlocks[i]
		if s[0] == b0 && s[1] == b1 {
			return true
		}
		if s[0] == 0 {
			return false
		}
	}
}
