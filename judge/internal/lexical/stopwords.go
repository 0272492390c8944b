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
