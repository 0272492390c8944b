// Package lexical is the builtin:lexical relevance judge: offline,
// deterministic and microseconds per chunk. It decides from word overlap
// alone whether each retrieved chunk is relevant to a reference (the expected
// or the generated answer), using the user query as context.
//
// # Signals
//
// Every chunk gets a score, a weighted sum of four signals in [0, 1]:
//
//   - query: the share of the query's content terms the chunk contains,
//     weighted by IDF. There is no corpus, so document frequencies are counted
//     over the retrieval's own chunks: a term every chunk shares says nothing
//     about which of them is relevant.
//   - answer: 1 when the reference occurs in the chunk as a phrase, otherwise
//     partial credit for the IDF-weighted share of its terms. Only reference
//     terms the query lacks count, so a reference that adds nothing to the
//     query ("yes", "no", or one of two names the question compares) carries
//     no signal and the judge falls back to the query alone.
//   - names: the query's names (runs of capitalised words such as "Kiss and
//     Tell"), found in the chunk as phrases, weighted by how few chunks have
//     them, and counted double near the chunk's start, where its subject is.
//   - subject: the share of the chunk's leading name (encyclopaedic, news
//     and product text opens with its subject, and many retrievers prefix the
//     title) that the query or the reference contains. A chunk about
//     something the question names, or about the answer itself, is very
//     likely needed to arrive at it.
//
// # Decision
//
// Scores are only comparable within one retrieval (IDF is), so the decision
// is relative: a chunk is relevant when it scores at least Alpha times the best
// chunk, or stands out at least Beta standard deviations above the mean. The
// first rule keeps the verdicts sensible when most chunks are relevant, the
// second picks the outliers when few are; no number of relevant chunks is
// assumed. A relative rule alone would call the best of a set of unrelated
// chunks relevant, so a chunk also needs absolute evidence, independent of the
// other chunks: the answer phrase, or at least MinEvidence of the query's or
// the answer's terms, or of its own subject's words in the query.
//
// Containing the reference is decisive, whatever the scores, as long as the
// reference tells the chunks apart: it has terms the query lacks and occurs in
// at most half of the chunks. A short reference found nearly everywhere (a
// year, a common word) is left to the scores.
//
// # Limits
//
// Only the first MaxChunkRunes runes of a chunk and the first MaxQueryRunes
// runes of the query and of the reference are read; the work per chunk is
// linear in the words read. Phrase containment of the reference is skipped
// for references longer than maxPhraseWords words, which a chunk will not
// contain verbatim anyway (their terms still count).
package lexical

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

const (
	// MaxChunkRunes caps the runes of a chunk that are read (~1,300 English
	// words): relevance is nearly always evident early in a chunk.
	MaxChunkRunes = 8192
	// MaxQueryRunes caps the runes read of the query and of the reference.
	MaxQueryRunes = 2048

	maxNames       = 32 // query names searched for in every chunk
	maxNameWords   = 8  // words of a name (query names and chunk subjects)
	maxPhraseWords = 32 // longest reference searched for as a phrase
	maxQuotedRunes = 60 // longest text quoted in a reason
)

// Verdict is the judgement of one chunk.
type Verdict struct {
	Relevant bool
	// Reason is one short sentence naming the evidence. It quotes at most a
	// few words (of the reference, a query name or the chunk's subject),
	// never the chunk.
	Reason string
}

// Params are the judge's constants. DefaultParams returns the tuned values;
// others are for experiments such as the tuning report in hotpotqa_test.go.
type Params struct {
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
func DefaultParams() Params {
	return Params{
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
func Judge(query, reference string, chunks []string) []Verdict {
	return DefaultParams().Judge(query, reference, chunks)
}

// name is a run of capitalised words in the query.
type name struct {
	terms []int  // term indices
	text  string // as written, for reasons
}

// retrieval holds what is known about the query and reference.
type retrieval struct {
	terms   map[string]int // stem → index; query terms first
	nQuery  int            // terms[:nQuery] are the query's
	nTerms  int
	names   []name
	phrase  []string // reference words, for containment; nil if none
	refText string   // the reference as quoted in reasons
}

// chunkInfo is what one pass over a chunk yields.
type chunkInfo struct {
	has      []bool  // has[t]: the chunk contains term t
	name     []int8  // name[k]: 0 absent, 1 present, 2 present in the lead
	subject  float64 // share of the subject's words in the query
	subjText string
	answer   bool // the reference phrase occurs in the chunk
}

// Judge decides the relevance of each chunk with parameters p.
func (p Params) Judge(query, reference string, chunks []string) []Verdict {
	out := make([]Verdict, len(chunks))
	if len(chunks) == 0 {
		return out
	}
	r := newRetrieval(query, reference)
	infos := make([]chunkInfo, len(chunks))
	df := make([]int, r.nTerms)         // chunks containing each term
	answerDF := 0                       // chunks containing the reference phrase
	nameDF := make([]int, len(r.names)) // chunks containing each name
	var buf scanBuffers
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
		idf[t] = inverseDF(n, df[t])
		if t < r.nQuery {
			queryTotal += idf[t]
		} else {
			answerTotal += idf[t]
		}
	}
	nameIDF := make([]float64, len(r.names))
	var nameTotal float64
	for k := range nameIDF {
		nameIDF[k] = inverseDF(n, nameDF[k])
		nameTotal += nameIDF[k]
	}

	scores := make([]float64, len(chunks))
	sigs := make([]signals, len(chunks))
	for i, f := range infos {
		s := signals{bestName: -1}
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
		s.query = share(s.query, queryTotal)
		s.queryTerms = shareInt(qTerms, r.nQuery)
		s.answerTerms = shareInt(aTerms, r.nTerms-r.nQuery)
		if f.answer {
			s.answer = 1
		} else {
			s.answer = p.PartialAnswer * share(s.answer, answerTotal)
		}
		for k, m := range f.name {
			if m > 0 {
				s.names += nameIDF[k] * float64(m) / 2
				if s.bestName < 0 || nameIDF[k] > nameIDF[s.bestName] {
					s.bestName = k
				}
			}
		}
		s.names = share(s.names, nameTotal)
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
		out[i] = Verdict{Relevant: rel, Reason: p.reason(r, infos[i], s, rel, ev, scores[i], cut)}
	}
	return out
}

// signals are a chunk's signal values, plus what its reason needs.
type signals struct {
	query, answer, names, subject float64
	// Unweighted shares of query and answer terms, for the absolute floor:
	// IDF depends on the other chunks, evidence must not.
	queryTerms, answerTerms float64
	bestName                int // index of the rarest name found, or -1
}

// newRetrieval analyses the query and the reference.
func newRetrieval(query, reference string) *retrieval {
	qt := tokenize(nil, query, MaxQueryRunes)
	rt := tokenize(nil, reference, MaxQueryRunes)
	r := &retrieval{terms: map[string]int{}}
	// Terms are indexed in order of first appearance, so that nothing
	// depends on map iteration order.
	add := func(toks []token) {
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
	r.names = queryNames(qt, r.terms)

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
		if hi-lo <= maxPhraseWords {
			for _, t := range rt[lo:hi] {
				r.phrase = append(r.phrase, t.word)
			}
		}
		r.refText = quote(strings.Join(strings.Fields(reference), " "))
	}
	return r
}

// queryNames returns the names in the query: runs of capitalised words, with
// lower-case function words allowed inside ("Kiss and Tell", "Band of
// Skulls"), except "and" and "or", which more often join two names ("Annie
// Morton or Terry Richardson"). Runs stop at punctuation.
func queryNames(qt []token, terms map[string]int) []name {
	var names []name
	var cur name
	var words []string
	flush := func() {
		if len(cur.terms) > 0 && len(names) < maxNames {
			cur.text = strings.Join(words, " ")
			names = append(names, cur)
		}
		cur, words = name{}, nil
	}
	for i, t := range qt {
		if t.brk || len(cur.terms) == maxNameWords {
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
type scanBuffers struct {
	tokens []token
	seq    []int
}

// scan reads one chunk.
func (p Params) scan(r *retrieval, chunk string, buf *scanBuffers) chunkInfo {
	ct := tokenize(buf.tokens, chunk, MaxChunkRunes)
	buf.tokens = ct
	f := chunkInfo{has: make([]bool, r.nTerms), name: make([]int8, len(r.names))}
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
		switch pos := index(seq, nm.terms); {
		case pos < 0:
		case pos < p.LeadWords:
			f.name[k] = 2
		default:
			f.name[k] = 1
		}
	}
	f.subject, f.subjText = subjectNamed(ct, r)
	f.answer = len(r.phrase) > 0 && containsPhrase(ct, r.phrase)
	return f
}

// subjectNamed finds the chunk's subject, the run of capitalised words it
// opens with, and returns the share of the subject's content words that the
// query or the reference name. A chunk about the answer itself ("Paris is
// the capital…" for "The capital of France is Paris.") counts as much as one
// about a name the question asks after.
func subjectNamed(ct []token, r *retrieval) (float64, string) {
	var content, found, end int
	for i, t := range ct {
		if i > 0 && t.brk || i == maxNameWords {
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
func (p Params) cut(scores []float64) float64 {
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
func (p Params) reason(r *retrieval, f chunkInfo, s signals, rel bool, ev, score, cut float64) string {
	var evidence string
	switch {
	case f.answer:
		evidence = fmt.Sprintf("contains the answer %s", r.refText)
	case s.subject == 1:
		evidence = fmt.Sprintf("is about %s, named in the query or answer", quote(f.subjText))
	case s.subject >= p.MinEvidence:
		evidence = fmt.Sprintf("is about %s, partly named in the query or answer", quote(f.subjText))
	case s.bestName >= 0:
		evidence = fmt.Sprintf("shares %s with the query", quote(r.names[s.bestName].text))
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
func inverseDF(n float64, df int) float64 {
	return math.Log((n + 1) / (float64(df) + 0.5))
}

func share(part, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return part / total
}

func shareInt(part, total int) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// index returns the first position of want in seq, or -1.
func index(seq, want []int) int {
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
func containsPhrase(ct []token, phrase []string) bool {
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
func quote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) > maxQuotedRunes {
		rs := []rune(s)
		s = string(rs[:maxQuotedRunes-1]) + "…"
	}
	return `"` + s + `"`
}
