package judge

// Request is one ranked retrieval to judge.
type Request struct {
	// Query is the user question. Judges use it as context (a reference of
	// "yes" means nothing without the question); it may be empty.
	Query string
	// Reference is the text each chunk is judged against: an expected answer,
	// the generated answer, or the query itself.
	Reference string
	// Chunks are the retrieved texts in rank order.
	Chunks []string
	// Purpose is what the judgement is for; "" is PurposeTraffic. The
	// observer gets it with every request made for the judgement.
	Purpose Purpose
	// Fresh asks the judge itself: no verdict is taken from the cache (a
	// request already in flight for the same chunk is still shared).
	Fresh bool
}

// Purpose says what a judgement is for, so that what the judge costs can
// be told apart by it.
type Purpose string

const (
	// PurposeTraffic is scoring the spans that pass through.
	PurposeTraffic Purpose = "traffic"
	// PurposeCanary is re-judging labelled retrievals to watch the judge.
	PurposeCanary Purpose = "canary"
	// PurposeShadow is a second judge judging scored spans beside the first.
	PurposeShadow Purpose = "shadow"
)

// Purposes lists every Purpose, for metric series created up front.
var Purposes = []Purpose{PurposeTraffic, PurposeCanary, PurposeShadow}

// Verdict is the judgement of one chunk.
type Verdict struct {
	// Relevant is true when the chunk is useful for arriving at the reference.
	Relevant bool
	// Reason is the judge's one-sentence justification; may be empty.
	Reason string
	// Stage is the judge that decided: its "provider:model" ("" for a chunk
	// decided without a judge, such as an empty one). In a cascade it says
	// which stage did.
	Stage string
	// Confidence, in [0, 1], is how sure builtin:lexical is of the verdict
	// (how far it is from going the other way); 0 for LLM verdicts, which
	// report none.
	Confidence float64
}

// Usage counts tokens spent by a judgement, failed attempts included.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// Add accumulates u into the receiver.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
}

// Result is the outcome of a successful judgement.
type Result struct {
	// Verdicts has exactly one entry per chunk of the Request, in rank order.
	Verdicts []Verdict
	// Usage is what the judgement cost upstream (zero for cached verdicts and
	// for the builtin judge).
	Usage Usage
}
