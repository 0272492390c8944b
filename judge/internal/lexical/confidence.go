package lexical

import "strconv"

// Confidence
//
// A verdict rests on two rules: the relative one (the chunk scores at least
// the cut the retrieval sets) and the absolute one (its evidence is at least
// MinEvidence). Its confidence is how far it is from going the other way,
// each rule's distance normalised to [0, 1]:
//
//   - relative: (score - cut) / (relativeScale · best score), scaled down by
//     the retrieval's contrast, its scores' coefficient of variation over
//     fullContrast. A retrieval of one chunk, or of chunks that all score
//     alike, has no contrast: the relative rule then says nothing.
//   - absolute: for a relevant verdict, how far the evidence is above
//     MinEvidence on the way to 1; for an irrelevant one, how far it is
//     below, over absentScale · MinEvidence.
//
// A relevant verdict needs both rules, so its confidence is the smaller of
// the two; an irrelevant one needs either to fail, so it is the larger of
// the failing ones. A chunk made relevant by the answer phrase although it
// scores below the cut is contested: its confidence is 0.
//
// The three scales were chosen on the tuning half of the HotpotQA sample,
// for the confidence to rank correct verdicts above wrong ones (AUC) over
// whole, 5-chunk, 3-chunk and single-chunk retrievals; the report in
// confidence_test.go shows the held-out half.
const (
	relativeScale = 0.5  // a margin of half the best score is certain
	fullContrast  = 0.25 // scores varying by a quarter of their mean are contrast enough
	absentScale   = 0.5  // evidence below half of MinEvidence is certainly too little
)

// decision is how a chunk's verdict was reached.
type decision struct {
	relevant bool
	score    float64
	evidence float64 // the absolute evidence, compared with MinEvidence
}

// confidence measures how sure a verdict is (see above).
func (p *Params) confidence(d decision, s spread) float64 {
	var contrast, relative float64 // relative: signed distance above the cut
	if s.n > 1 && s.mean > 0 && s.best > 0 {
		contrast = unit(s.sd / s.mean / fullContrast)
		relative = (d.score - s.cut) / (relativeScale * s.best)
	}
	if d.relevant {
		var absolute float64
		switch {
		case d.evidence < p.MinEvidence:
			absolute = 0 // relevant by the answer phrase alone
		case p.MinEvidence >= 1:
			absolute = 1
		default:
			absolute = (d.evidence - p.MinEvidence) / (1 - p.MinEvidence)
		}
		return unit(min(contrast*unit(relative), unit(absolute)))
	}
	var c float64
	if d.score < s.cut {
		c = contrast * unit(-relative)
	}
	if d.evidence < p.MinEvidence {
		c = max(c, unit((p.MinEvidence-d.evidence)/(absentScale*p.MinEvidence)))
	}
	return unit(c)
}

// unit clamps x to [0, 1], and NaN (from parameters that make no sense) to 0.
func unit(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

// appendConfidence appends " (confidence 0.82)" to a reason.
func appendConfidence(b []byte, c float64) []byte {
	b = append(b, " (confidence "...)
	b = strconv.AppendFloat(b, c, 'f', 2, 64)
	return append(b, ')')
}
