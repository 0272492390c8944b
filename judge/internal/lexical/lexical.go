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
// # Confidence
//
// Each verdict carries a confidence in [0, 1]: how far it is from going the
// other way, by each rule's margin (confidence.go). The relative rule's
// margin counts only as far as the retrieval has contrast, so a retrieval
// of one chunk, or of chunks that score alike, gets no confident relevant
// verdict: with nothing to compare, the judge calls most on-topic chunks
// relevant, and says so. A chunk below the evidence floor needs no other
// chunk to be judged irrelevant, and keeps its confidence. On the held-out
// half of the HotpotQA sample, whole retrievals, three verdicts in four have
// a confidence of at least 0.5 and 98% of those are right (the report in
// confidence_test.go): a cascade can keep them and ask an LLM about the rest.
//
// # Limits
//
// Only the first MaxChunkRunes runes of a chunk (or Params.ChunkRunes) and
// the first MaxQueryRunes runes of the query and of the reference are read;
// the work per chunk is linear in the words read. Phrase containment of the
// reference is skipped for references longer than maxPhraseWords words,
// which a chunk will not contain verbatim anyway (their terms still count).
//
// # Cost
//
// The query and the reference are analysed once per retrieval (or once for
// many, with Prepare). A chunk is then read in one pass that keeps none of
// its words: the scanner marks its word bytes eight at a time, one bit
// each, finds where words start in that mask, and reads an ASCII word's
// first bytes, lower-cased, straight from the text. Their first three bytes
// rule out most words as neither a query or reference term nor a reference
// word (a small filter built by Prepare): such a word is only counted, and
// where it ends is never looked for. Only the words that pass are
// lower-cased into a buffer, hashed, stemmed and looked up among the terms
// and the reference's words, and only they and the chunk's first words
// among the stop words: a name's words may have stop words between them,
// and the few words between two of its terms are read again to know. Judging
// a retrieval allocates its verdicts and one string for all its reasons; the
// analysis of the query and the reference is recycled (a Prepared, made to
// be kept, allocates its own), and holds their words as places in byte
// buffers rather than as strings.
package lexical

const (
	// MaxChunkRunes is how many runes of a chunk are read unless
	// Params.ChunkRunes says otherwise (~1,300 English words): relevance is
	// nearly always evident early in a chunk.
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
	// never the chunk. It ends with the confidence: " (confidence 0.82)".
	Reason string
	// Confidence, in [0, 1], is how far the verdict is from going the other
	// way (see the package comment): 0 on the boundary, or when nothing
	// but the other chunks decided it.
	Confidence float64
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
	// ChunkRunes is how many runes of each chunk are read, for a caller
	// that promises every judge the same view of a chunk; 0 (the default)
	// means MaxChunkRunes. The work per chunk is linear in it.
	ChunkRunes int
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

// chunkRunes is the number of runes of a chunk to read.
func (p Params) chunkRunes() int {
	if p.ChunkRunes > 0 {
		return p.ChunkRunes
	}
	return MaxChunkRunes
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

// Judge decides the relevance of each chunk with parameters p. It is
// p.Prepare(query, reference).Judge(chunks).
func (p Params) Judge(query, reference string, chunks []string) []Verdict {
	// The analysis is needed only while judging: its arrays are recycled.
	r := preparedPool.Get().(*Prepared)
	p.prepare(r, query, reference)
	out := r.Judge(chunks)
	if r.pooled() {
		preparedPool.Put(r)
	}
	return out
}
