// Package ragattr names what the ragprecision processor writes on the spans
// it selects: the score attributes, the evaluation event, and the values of
// the status attribute (README, "Output on spans"). The dialect readers use
// the status attribute to leave spans scored upstream alone.
package ragattr

// Attributes of a scored span.
const (
	Precision       = "rag.contextual_precision"
	Passed          = "rag.contextual_precision.passed"
	K               = "rag.contextual_precision.k"
	Relevant        = "rag.contextual_precision.relevant"
	Verdicts        = "rag.contextual_precision.verdicts"
	ReferenceSource = "rag.contextual_precision.reference_source"
	Judge           = "rag.contextual_precision.judge"
	// JudgeVersion is a short hash of what can change the judge's verdicts
	// besides the texts; also an attribute of the evaluation event.
	JudgeVersion = "rag.contextual_precision.judge_version"
	// Shadow is the shadow judge's CP of the same chunks, and ShadowJudge
	// its provider:model, on the share of scored spans it judged.
	Shadow      = "rag.contextual_precision.shadow"
	ShadowJudge = "rag.contextual_precision.shadow_judge"
	SampleRate  = "rag.contextual_precision.sample_rate"
	// Status is on every span the processor selects: scored, or why not.
	Status = "rag.contextual_precision.status"
	// Reason says which failure a judge_error was, or which limit an
	// overflow hit, so that an outage never reads as a capacity problem.
	Reason = "rag.contextual_precision.reason"
)

// Retrieval diagnostics of a scored span, from the same verdicts: what
// would improve the ranking, and the usual ranking measures.
const (
	// RetrievalOutcome is ideal, misranked or miss.
	RetrievalOutcome = "rag.retrieval.outcome"
	// FirstRelevantRank is the 1-based rank of the first relevant chunk,
	// 0 when none is relevant.
	FirstRelevantRank = "rag.retrieval.first_relevant_rank"
	ReciprocalRank    = "rag.retrieval.reciprocal_rank"
	NDCG              = "rag.retrieval.ndcg"
	// PrecisionAtK is the share of the K judged chunks that are relevant.
	PrecisionAtK = "rag.retrieval.precision"
)

// A reranker's input ranking, on a rerank span that carries it: its first
// K documents (K the number the reranker returned) scored with the verdicts
// of the same judgement as the output.
const (
	RerankInputPrecision = "rag.rerank.input_contextual_precision"
	RerankInputNDCG      = "rag.rerank.input_ndcg"
)

// The evaluation event of a scored span, in the GenAI conventions' terms.
const (
	EvaluationEvent       = "gen_ai.evaluation.result"
	EvaluationName        = "gen_ai.evaluation.name"
	EvaluationScoreValue  = "gen_ai.evaluation.score.value"
	EvaluationScoreLabel  = "gen_ai.evaluation.score.label"
	EvaluationExplanation = "gen_ai.evaluation.explanation"
	// ContextualPrecision is the event's gen_ai.evaluation.name.
	ContextualPrecision = "contextual_precision"
	// LabelPass and LabelFail are its score labels.
	LabelPass = "pass"
	LabelFail = "fail"
)

// Values of Status.
const (
	StatusScored      = "scored"
	StatusNoChunks    = "no_chunks"
	StatusNoReference = "no_reference"
	StatusTooLarge    = "too_large"
	StatusJudgeError  = "judge_error"
	StatusTimeout     = "timeout"
	StatusBudget      = "budget"
	StatusOverflow    = "overflow"
	StatusShutdown    = "shutdown"
)

// UnscoredStatuses are the statuses of selected spans forwarded without a
// score.
var UnscoredStatuses = []string{
	StatusNoChunks, StatusNoReference, StatusTooLarge, StatusJudgeError,
	StatusTimeout, StatusBudget, StatusOverflow, StatusShutdown,
}
