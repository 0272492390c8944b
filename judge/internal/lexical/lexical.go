// Package lexical is the builtin:lexical relevance judge: offline,
// deterministic and microseconds per chunk. It decides from word overlap
// alone whether each retrieved chunk is relevant to a reference (the expected
// or the generated answer), using the user query as context. Its signals,
// its relative decision, its confidence, its limits and what a chunk costs
// it are described in docs/LEXICAL.md.
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
