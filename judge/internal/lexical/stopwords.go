package lexical

// stopWords is a standard English stop-word list (the NLTK list, plus the
// single letters left by splitting contractions and possessives, and a few
// question fillers). Question words are included: they say what kind of
// answer is wanted, not what it is about.
var stopWords = func() map[string]struct{} {
	words := []string{
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
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()

// maxStopWordLen is the length in bytes of the longest stop word.
const maxStopWordLen = len("yourselves")

// IsStopWord reports whether the lower-cased word w is an English stop word.
func IsStopWord(w string) bool {
	if len(w) > maxStopWordLen {
		return false // most content words: skip the hash
	}
	_, ok := stopWords[w]
	return ok
}
