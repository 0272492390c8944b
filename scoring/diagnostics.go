package scoring

import "math"

// Outcome classifies a scored retrieval by what would improve it.
type Outcome string

const (
	// OutcomeIdeal: at least one relevant chunk, and every relevant chunk
	// ranks above every irrelevant one (CP = 1).
	OutcomeIdeal Outcome = "ideal"
	// OutcomeMisranked: relevant chunks were retrieved, but some rank below
	// irrelevant ones (0 < CP < 1): a reranker helps.
	OutcomeMisranked Outcome = "misranked"
	// OutcomeMiss: no relevant chunk at all (CP = 0): retrieval, the index
	// or chunking is at fault, and no reranking can help.
	OutcomeMiss Outcome = "miss"
)

// Outcomes lists every Outcome, best first.
var Outcomes = []Outcome{OutcomeIdeal, OutcomeMisranked, OutcomeMiss}

// Diagnostics are the ranking measures of one retrieval that sit beside its
// Contextual Precision, computed from the same verdicts.
type Diagnostics struct {
	Outcome Outcome
	// FirstRelevantRank is the 1-based rank of the first relevant chunk; 0
	// when none is relevant.
	FirstRelevantRank int
	// ReciprocalRank is 1 / FirstRelevantRank; 0 when none is relevant.
	ReciprocalRank float64
	// NDCG is binary nDCG over the K judged chunks: Σ v_k / log2(k+1) over
	// the same sum with the relevant chunks ranked first; 0 when none is
	// relevant.
	NDCG float64
	// Precision is Precision@K: relevant / K.
	Precision float64
}

// Diagnose computes the Diagnostics of verdicts given in rank order, cut to
// topK as ContextualPrecision cuts them (topK > 0 keeps the first topK; 0
// keeps all). ok is false when there is no verdict, as for
// ContextualPrecision: such a retrieval has no score.
//
// Every verdict counts as a judged chunk at its rank. A chunk without text
// arrives as a false verdict: judged, and not relevant, exactly as CP counts
// it (it lowers Precision@K and pushes later relevant chunks down).
func Diagnose(verdicts []bool, topK int) (d Diagnostics, ok bool) {
	if topK > 0 && topK < len(verdicts) {
		verdicts = verdicts[:topK]
	}
	if len(verdicts) == 0 {
		return Diagnostics{}, false
	}
	// One pass: the ideal DCG of r relevant chunks is the sum of the first
	// r discounts, so it grows by one discount per relevant chunk found.
	var dcg, ideal float64
	relevant, last := 0, 0
	for i, v := range verdicts {
		if !v {
			continue
		}
		relevant++
		last = i + 1
		if relevant == 1 {
			d.FirstRelevantRank = last
		}
		dcg += discount(last)
		ideal += discount(relevant)
	}
	d.Precision = float64(relevant) / float64(len(verdicts))
	switch {
	case relevant == 0:
		d.Outcome = OutcomeMiss
		return d, true
	case last == relevant:
		// The relevant chunks are exactly the top ones: CP = 1.
		d.Outcome = OutcomeIdeal
	default:
		d.Outcome = OutcomeMisranked
	}
	d.ReciprocalRank = 1 / float64(d.FirstRelevantRank)
	d.NDCG = dcg / ideal
	return d, true
}

// discounts[k-1] is 1/log2(k+1), the DCG weight of rank k, for the ranks
// most retrievals have; deeper ranks compute theirs.
var discounts = func() (t [128]float64) {
	for i := range t {
		t[i] = 1 / math.Log2(float64(i+2))
	}
	return t
}()

func discount(rank int) float64 {
	if rank <= len(discounts) {
		return discounts[rank-1]
	}
	return 1 / math.Log2(float64(rank+1))
}

// RankLabels are the values of the rank label of the per-rank chunk
// counters: "1" … "10", then "11+" for every deeper rank.
var RankLabels = []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11+"}

// RankLabel is the rank label of a 1-based rank: its number up to 10,
// "11+" beyond (and "1" for a rank below 1). It does not allocate.
func RankLabel(rank int) string {
	if rank < 1 {
		rank = 1
	}
	if rank > len(RankLabels) {
		rank = len(RankLabels)
	}
	return RankLabels[rank-1]
}
