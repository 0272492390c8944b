// Package scoring computes Contextual Precision over rank-ordered relevance
// verdicts, and the running statistics used to reason about sampled scores.
// It is pure: no I/O, no clocks, no allocation on the scoring path.
package scoring

// Score is Contextual Precision for one ranked retrieval.
type Score struct {
	// Value is CP in [0, 1].
	Value float64
	// K is the number of verdicts scored (after the top_k cut).
	K int
	// Relevant is how many of those K verdicts are relevant.
	Relevant int
}

// ContextualPrecision scores verdicts given in rank order (verdicts[0] is the
// top-ranked chunk). topK > 0 limits scoring to the first topK verdicts; 0
// scores them all.
//
//	CP = Σ_k (P@k · v_k) / Σ_k v_k,   P@k = (v_1 + … + v_k) / k
//
// ok is false when there is nothing to score (no verdicts): such a retrieval
// has no score at all, which is different from a score of 0. When no verdict
// is relevant the score is exactly 0, and when all are it is exactly 1: there
// is no smoothing epsilon.
func ContextualPrecision(verdicts []bool, topK int) (s Score, ok bool) {
	if topK > 0 && topK < len(verdicts) {
		verdicts = verdicts[:topK]
	}
	if len(verdicts) == 0 {
		return Score{}, false
	}
	var sum float64
	relevant := 0
	for i, v := range verdicts {
		if !v {
			continue
		}
		relevant++
		sum += float64(relevant) / float64(i+1)
	}
	s = Score{K: len(verdicts), Relevant: relevant}
	if relevant > 0 {
		s.Value = sum / float64(relevant)
	}
	return s, true
}

// Passed reports whether a score meets the threshold; a score equal to the
// threshold passes.
func Passed(value, threshold float64) bool {
	return value >= threshold
}
