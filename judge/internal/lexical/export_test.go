package lexical

// ConfidencesWithScales judges chunks with DefaultParams and returns the
// verdicts with the confidences they would have with other confidence
// scales (see confidence.go), for TestConfidenceTuning.
func ConfidencesWithScales(query, reference string, chunks []string, relative, contrast, absent float64) ([]Verdict, []float64) {
	p := DefaultParams()
	out := make([]Verdict, len(chunks))
	decisions := make([]decision, len(chunks))
	p.Prepare(query, reference).judge(chunks, out, decisions)
	if len(chunks) == 0 {
		return out, nil
	}
	scores := make([]float64, len(chunks))
	for i, d := range decisions {
		scores[i] = d.score
	}
	s := p.spread(scores)
	scales := confidenceScales{relative: relative, contrast: contrast, absent: absent}
	confs := make([]float64, len(chunks))
	for i, d := range decisions {
		confs[i] = scales.confidence(&p, d, s)
	}
	return out, confs
}

// DefaultConfidenceScales are the scales Judge uses.
var DefaultConfidenceScales = [3]float64{defaultConfidenceScales.relative, defaultConfidenceScales.contrast, defaultConfidenceScales.absent}
