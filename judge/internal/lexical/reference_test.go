package lexical

// This file is a frozen copy of the judge as it was before the allocation-free
// rewrite, every package-level name prefixed with "ref". It
// is the reference the optimised judge is compared against (equivalence_test.go)
// and the baseline its benchmarks report ratios to. Do not edit it to follow
// the judge: a change of verdict must show up as a difference from it.

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// MaxChunkRunes caps the runes of a chunk that are read (~1,300 English
	// words): relevance is nearly always evident early in a chunk.
	refMaxChunkRunes = 8192
	// MaxQueryRunes caps the runes read of the query and of the reference.
	refMaxQueryRunes = 2048

	refMaxNames       = 32 // query names searched for in every chunk
	refMaxNameWords   = 8  // words of a name (query names and chunk subjects)
	refMaxPhraseWords = 32 // longest reference searched for as a phrase
	refMaxQuotedRunes = 60 // longest text quoted in a reason
)

// Verdict is the judgement of one chunk.
type refVerdict struct {
	Relevant bool
	// Reason is one short sentence naming the evidence. It quotes at most a
	// few words (of the reference, a query name or the chunk's subject),
	// never the chunk.
	Reason string
}

// Params are the judge's constants. DefaultParams returns the tuned values;
// others are for experiments such as the tuning report in hotpotqa_test.go.
type refParams struct {
	// Weights of the signals in a chunk's score (see the package comment).
	QueryWeight, AnswerWeight, NameWeight, SubjectWeight float64
	// PartialAnswer is the answer signal of a chunk that has all of the
	// reference's terms but not the phrase; fewer terms earn proportionally
	// less.
	PartialAnswer float64
	// LeadWords is how many content words from a chunk's start count as its
	// lead, where a query name counts double.
	LeadWords int
	// Alpha and Beta set the relative cut: min(Alpha·best, mean + Beta·sd).
	Alpha, Beta float64
	// MinEvidence is the absolute floor (see the package comment).
	MinEvidence float64
}

// DefaultParams returns the parameters Judge uses. They were tuned on the
// tuning half of a HotpotQA sample (see internal/hotpotqa); the held-out half
// scores within a few points of it.
func refDefaultParams() refParams {
	return refParams{
		QueryWeight:   0.8,
		AnswerWeight:  1.0,
		NameWeight:    0.5,
		SubjectWeight: 0.7,
		PartialAnswer: 0.9,
		LeadWords:     4,
		Alpha:         0.9,
		Beta:          0.7,
		MinEvidence:   0.4,
	}
}

// Judge decides the relevance of each chunk to reference, with query as
// context, using DefaultParams. It returns one verdict per chunk, in order;
// either text may be empty, and a reference that adds nothing to the query
// ("yes", "no") leaves the query to decide. A chunk that contains an
// informative reference (see the package comment) is always relevant. It is
// a pure function: safe for concurrent use, and the same input always gives
// the same output, whatever the order of the chunks.
func refJudge(query, reference string, chunks []string) []refVerdict {
	return refDefaultParams().Judge(query, reference, chunks)
}

// name is a run of capitalised words in the query.
type refName struct {
	terms []int  // term indices
	text  string // as written, for reasons
}

// retrieval holds what is known about the query and reference.
type refRetrieval struct {
	terms   map[string]int // stem → index; query terms first
	nQuery  int            // terms[:nQuery] are the query's
	nTerms  int
	names   []refName
	phrase  []string // reference words, for containment; nil if none
	refText string   // the reference as quoted in reasons
}

// chunkInfo is what one pass over a chunk yields.
type refChunkInfo struct {
	has      []bool  // has[t]: the chunk contains term t
	name     []int8  // name[k]: 0 absent, 1 present, 2 present in the lead
	subject  float64 // share of the subject's words in the query
	subjText string
	answer   bool // the reference phrase occurs in the chunk
}

// Judge decides the relevance of each chunk with parameters p.
func (p refParams) Judge(query, reference string, chunks []string) []refVerdict {
	out := make([]refVerdict, len(chunks))
	if len(chunks) == 0 {
		return out
	}
	r := refNewRetrieval(query, reference)
	infos := make([]refChunkInfo, len(chunks))
	df := make([]int, r.nTerms)         // chunks containing each term
	answerDF := 0                       // chunks containing the reference phrase
	nameDF := make([]int, len(r.names)) // chunks containing each name
	var buf refScanBuffers
	for i, c := range chunks {
		infos[i] = p.scan(r, c, &buf)
		for t, h := range infos[i].has {
			if h {
				df[t]++
			}
		}
		if infos[i].answer {
			answerDF++
		}
		for k, m := range infos[i].name {
			if m > 0 {
				nameDF[k]++
			}
		}
	}

	n := float64(len(chunks))
	idf := make([]float64, r.nTerms)
	var queryTotal, answerTotal float64
	for t := range idf {
		idf[t] = refInverseDF(n, df[t])
		if t < r.nQuery {
			queryTotal += idf[t]
		} else {
			answerTotal += idf[t]
		}
	}
	nameIDF := make([]float64, len(r.names))
	var nameTotal float64
	for k := range nameIDF {
		nameIDF[k] = refInverseDF(n, nameDF[k])
		nameTotal += nameIDF[k]
	}

	scores := make([]float64, len(chunks))
	sigs := make([]refSignals, len(chunks))
	for i, f := range infos {
		s := refSignals{bestName: -1}
		var qTerms, aTerms int
		for t, h := range f.has {
			switch {
			case !h:
			case t < r.nQuery:
				s.query += idf[t]
				qTerms++
			default:
				s.answer += idf[t]
				aTerms++
			}
		}
		s.query = refShare(s.query, queryTotal)
		s.queryTerms = refShareInt(qTerms, r.nQuery)
		s.answerTerms = refShareInt(aTerms, r.nTerms-r.nQuery)
		if f.answer {
			s.answer = 1
		} else {
			s.answer = p.PartialAnswer * refShare(s.answer, answerTotal)
		}
		for k, m := range f.name {
			if m > 0 {
				s.names += nameIDF[k] * float64(m) / 2
				if s.bestName < 0 || nameIDF[k] > nameIDF[s.bestName] {
					s.bestName = k
				}
			}
		}
		s.names = refShare(s.names, nameTotal)
		s.subject = f.subject
		scores[i] = p.QueryWeight*s.query + p.AnswerWeight*s.answer + p.NameWeight*s.names + p.SubjectWeight*s.subject
		sigs[i] = s
	}

	// A reference found in no more than half of the chunks tells them
	// apart, and a chunk that contains it is relevant whatever else it
	// holds. One found in most chunks ("1998" in a retrieval of 1998
	// albums) is left to the scores.
	answerDecides := 2*answerDF <= len(chunks)
	cut := p.cut(scores)
	for i, s := range sigs {
		ev := max(s.queryTerms, s.answerTerms, s.subject)
		if infos[i].answer {
			ev = 1
		}
		rel := scores[i] >= cut && ev >= p.MinEvidence || infos[i].answer && answerDecides
		out[i] = refVerdict{Relevant: rel, Reason: p.reason(r, infos[i], s, rel, ev, scores[i], cut)}
	}
	return out
}

// signals are a chunk's signal values, plus what its reason needs.
type refSignals struct {
	query, answer, names, subject float64
	// Unweighted shares of query and answer terms, for the absolute floor:
	// IDF depends on the other chunks, evidence must not.
	queryTerms, answerTerms float64
	bestName                int // index of the rarest name found, or -1
}

// newRetrieval analyses the query and the reference.
func refNewRetrieval(query, reference string) *refRetrieval {
	qt := refTokenize(nil, query, refMaxQueryRunes)
	rt := refTokenize(nil, reference, refMaxQueryRunes)
	r := &refRetrieval{terms: map[string]int{}}
	// Terms are indexed in order of first appearance, so that nothing
	// depends on map iteration order.
	add := func(toks []refToken) {
		for _, t := range toks {
			if _, ok := r.terms[t.stem]; !ok && !t.stop {
				r.terms[t.stem] = len(r.terms)
			}
		}
	}
	add(qt)
	r.nQuery = len(r.terms)
	add(rt)
	r.nTerms = len(r.terms)
	r.names = refQueryNames(qt, r.terms)

	// Only a reference with terms the query lacks is looked for as a
	// phrase: "yes", or one of the names a comparison question offers,
	// would match chunks for what the query says, not for the answer.
	if r.nTerms > r.nQuery {
		// The phrase is the reference's words without leading and trailing
		// stop words: "the North Atlantic Conference" is found in "… known
		// as North Atlantic Conference".
		lo, hi := 0, len(rt)
		for lo < hi && rt[lo].stop {
			lo++
		}
		for hi > lo && rt[hi-1].stop {
			hi--
		}
		if hi-lo <= refMaxPhraseWords {
			for _, t := range rt[lo:hi] {
				r.phrase = append(r.phrase, t.word)
			}
		}
		r.refText = refQuote(strings.Join(strings.Fields(reference), " "))
	}
	return r
}

// queryNames returns the names in the query: runs of capitalised words, with
// lower-case function words allowed inside ("Kiss and Tell", "Band of
// Skulls"), except "and" and "or", which more often join two names ("Annie
// Morton or Terry Richardson"). Runs stop at punctuation.
func refQueryNames(qt []refToken, terms map[string]int) []refName {
	var names []refName
	var cur refName
	var words []string
	flush := func() {
		if len(cur.terms) > 0 && len(names) < refMaxNames {
			cur.text = strings.Join(words, " ")
			names = append(names, cur)
		}
		cur, words = refName{}, nil
	}
	for i, t := range qt {
		if t.brk || len(cur.terms) == refMaxNameWords {
			flush()
		}
		switch {
		case t.upper && !t.stop:
			cur.terms = append(cur.terms, terms[t.stem])
			words = append(words, t.raw)
		case len(cur.terms) > 0 && t.stop && !t.upper && t.word != "and" && t.word != "or" &&
			i+1 < len(qt) && qt[i+1].upper && !qt[i+1].brk:
			words = append(words, t.raw)
		default:
			flush()
		}
	}
	flush()
	return names
}

// scanBuffers are reused from chunk to chunk: a chunk's words are not
// needed once it is scanned.
type refScanBuffers struct {
	tokens []refToken
	seq    []int
}

// scan reads one chunk.
func (p refParams) scan(r *refRetrieval, chunk string, buf *refScanBuffers) refChunkInfo {
	ct := refTokenize(buf.tokens, chunk, refMaxChunkRunes)
	buf.tokens = ct
	f := refChunkInfo{has: make([]bool, r.nTerms), name: make([]int8, len(r.names))}
	// seq is the chunk's content words as term indices (-1: not a term), the
	// text query names are matched against.
	seq := buf.seq[:0]
	for _, t := range ct {
		if t.stop {
			continue
		}
		ti, ok := r.terms[t.stem]
		if !ok {
			ti = -1
		} else {
			f.has[ti] = true
		}
		seq = append(seq, ti)
	}
	buf.seq = seq
	for k, nm := range r.names {
		switch pos := refIndex(seq, nm.terms); {
		case pos < 0:
		case pos < p.LeadWords:
			f.name[k] = 2
		default:
			f.name[k] = 1
		}
	}
	f.subject, f.subjText = refSubjectNamed(ct, r)
	f.answer = len(r.phrase) > 0 && refContainsPhrase(ct, r.phrase)
	return f
}

// subjectNamed finds the chunk's subject, the run of capitalised words it
// opens with, and returns the share of the subject's content words that the
// query or the reference name. A chunk about the answer itself ("Paris is
// the capital…" for "The capital of France is Paris.") counts as much as one
// about a name the question asks after.
func refSubjectNamed(ct []refToken, r *refRetrieval) (float64, string) {
	var content, found, end int
	for i, t := range ct {
		if i > 0 && t.brk || i == refMaxNameWords {
			break
		}
		inner := t.stop && i+1 < len(ct) && ct[i+1].upper && !ct[i+1].brk
		if !t.upper && !inner {
			break
		}
		end = i + 1
		if t.stop {
			continue
		}
		content++
		if _, ok := r.terms[t.stem]; ok {
			found++
		}
	}
	if content == 0 {
		return 0, ""
	}
	words := make([]string, end)
	for i, t := range ct[:end] {
		words[i] = t.raw
	}
	return float64(found) / float64(content), strings.Join(words, " ")
}

// cut is the score a chunk needs, relative to the retrieval.
func (p refParams) cut(scores []float64) float64 {
	var best, mean, sd float64
	for _, s := range scores {
		best = math.Max(best, s)
		mean += s
	}
	mean /= float64(len(scores))
	for _, s := range scores {
		sd += (s - mean) * (s - mean)
	}
	sd = math.Sqrt(sd / float64(len(scores)))
	return math.Min(p.Alpha*best, mean+p.Beta*sd)
}

// reason explains a verdict in one sentence.
func (p refParams) reason(r *refRetrieval, f refChunkInfo, s refSignals, rel bool, ev, score, cut float64) string {
	var evidence string
	switch {
	case f.answer:
		evidence = fmt.Sprintf("contains the answer %s", r.refText)
	case s.subject == 1:
		evidence = fmt.Sprintf("is about %s, named in the query or answer", refQuote(f.subjText))
	case s.subject >= p.MinEvidence:
		evidence = fmt.Sprintf("is about %s, partly named in the query or answer", refQuote(f.subjText))
	case s.bestName >= 0:
		evidence = fmt.Sprintf("shares %s with the query", refQuote(r.names[s.bestName].text))
	case s.answerTerms >= p.MinEvidence:
		evidence = fmt.Sprintf("has %.0f%% of the answer's terms", 100*s.answerTerms)
	case s.queryTerms > 0:
		evidence = fmt.Sprintf("has %.0f%% of the query's terms", 100*s.queryTerms)
	}
	if evidence == "" {
		evidence = "has no term of the query or the answer"
	}
	switch {
	case rel:
		return evidence
	case ev < p.MinEvidence:
		return fmt.Sprintf("low overlap with query and answer (evidence %.2f < %.2f)", ev, p.MinEvidence)
	default:
		return fmt.Sprintf("%s but other chunks match better (score %.2f < %.2f)", evidence, score, cut)
	}
}

// inverseDF is the smoothed inverse document frequency of a term found in
// df of n chunks; it is positive even when every chunk has the term.
func refInverseDF(n float64, df int) float64 {
	return math.Log((n + 1) / (float64(df) + 0.5))
}

func refShare(part, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return part / total
}

func refShareInt(part, total int) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// index returns the first position of want in seq, or -1.
func refIndex(seq, want []int) int {
outer:
	for i := 0; i+len(want) <= len(seq); i++ {
		for j, w := range want {
			if seq[i+j] != w {
				continue outer
			}
		}
		return i
	}
	return -1
}

// containsPhrase reports whether phrase occurs as consecutive words of ct.
func refContainsPhrase(ct []refToken, phrase []string) bool {
outer:
	for i := 0; i+len(phrase) <= len(ct); i++ {
		for j, w := range phrase {
			if ct[i+j].word != w {
				continue outer
			}
		}
		return true
	}
	return false
}

// quote puts s in double quotes, shortened to maxQuotedRunes runes, with
// invalid UTF-8 replaced so that reasons are always valid text.
func refQuote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) > refMaxQuotedRunes {
		rs := []rune(s)
		s = string(rs[:refMaxQuotedRunes-1]) + "…"
	}
	return `"` + s + `"`
}

// token is one word of a text.
type refToken struct {
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
func refTokenize(dst []refToken, s string, maxRunes int) []refToken {
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
		toks = make([]refToken, 0, want) // about one word per 5-6 bytes of English
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
		toks = append(toks, refToken{
			raw:   raw,
			word:  w,
			stem:  refStem(w),
			upper: unicode.IsUpper(first) || unicode.IsDigit(first),
			stop:  refIsStopWord(w),
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
		case refIsWordRune(r):
			if start < 0 {
				start = i
			}
		case (r == '.' || r == ',') && start >= 0 && refBetweenDigits(s, i):
			// inside a number
		default:
			flush(i)
			if !unicode.IsSpace(r) && !refIsJoiner(r) {
				brk = true
			}
		}
		i += size
	}
	flush(len(s))
	return toks
}

func refIsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// isJoiner reports punctuation that separates words without ending a name.
func refIsJoiner(r rune) bool {
	switch r {
	case '-', '\u2010', '\u2011', // hyphens: "Hork-Bajir"
		'\'', '\u2018', '\u2019', // apostrophes: "Hollywood's"
		'"', '\u201c', '\u201d': // quotes: Terrence "Uncle Terry" Richardson
		return true
	}
	return false
}

// betweenDigits reports whether the byte at i has an ASCII digit on each side.
func refBetweenDigits(s string, i int) bool {
	return i > 0 && i+1 < len(s) && refIsDigit(s[i-1]) && refIsDigit(s[i+1])
}

func refIsDigit(b byte) bool { return '0' <= b && b <= '9' }

// stem strips English plural endings, following Harman's S-stemmer:
// "parties" → "party", "films" → "film", "heroes" → "heroe"; "glass",
// "campus" and "Paris" stay. It is deliberately light: a full Porter stemmer
// conflates names and unrelated words more often than it helps on short
// queries, while singular/plural mismatches between question and passage are
// common ("which films" / "the film").
func refStem(w string) string {
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

// stopWords is a standard English stop-word list (the NLTK list, plus the
// single letters left by splitting contractions and possessives, and a few
// question fillers). Question words are included: they say what kind of
// answer is wanted, not what it is about.
var refStopWords = func() map[string]struct{} {
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
const refMaxStopWordLen = len("yourselves")

// IsStopWord reports whether the lower-cased word w is an English stop word.
func refIsStopWord(w string) bool {
	if len(w) > refMaxStopWordLen {
		return false // most content words: skip the hash
	}
	_, ok := refStopWords[w]
	return ok
}
