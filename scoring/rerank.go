package scoring

// Lift compares a reranker's output ranking with its input ranking, from
// the same verdicts: the input is scored on its first K documents, K the
// number the reranker returned, so that both are judged at the depth the
// reranker returns.
type Lift struct {
	// InputCP and InputNDCG are the Contextual Precision and binary nDCG
	// of the input's first K documents.
	InputCP, InputNDCG float64
	// Value is the output's CP minus InputCP, in [-1, 1]: positive when the
	// reranker moved relevant documents up.
	Value float64
}

// RerankLift scores a reranker's input ranking against its output, given
// the verdicts of the output (in its order, already cut to top_k) and of
// the input (in its order). ok is false when there is nothing to compare:
// no output, or fewer input documents than output ones (then the input on
// the span is not the one the output was drawn from, or is cut short). As
// for ContextualPrecision, a ranking with no relevant document scores 0:
// a reranker given nothing relevant has a lift of 0.
func RerankLift(output, input []bool) (l Lift, ok bool) {
	k := len(output)
	if k == 0 || len(input) < k {
		return Lift{}, false
	}
	out, _ := ContextualPrecision(output, 0)
	in, _ := ContextualPrecision(input, k)
	d, _ := Diagnose(input, k)
	return Lift{InputCP: in.Value, InputNDCG: d.NDCG, Value: out.Value - in.Value}, true
}
