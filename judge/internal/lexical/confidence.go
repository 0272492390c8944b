package lexical

// confidenceScales turn each rule's margin into a confidence in [0, 1]: how
// far a verdict is from going the other way (docs/LEXICAL.md, "Confidence").
// They were chosen on the tuning half of the HotpotQA sample for the
// confidence to rank right verdicts above wrong ones (TestConfidenceTuning);
// contrast is coarser than the grid's best because scores that vary by a
// tenth of their mean hardly tell chunks apart.
type confidenceScales struct {
	relative float64 // a margin of this share of the best score is certain
	contrast float64 // scores whose coefficient of variation reaches it are contrast enough
	absent   float64 // evidence below this share of MinEvidence is certainly too little
}

var defaultConfidenceScales = confidenceScales{relative: 0.5, contrast: 0.25, absent: 0.5}

// decision is how a chunk's verdict was reached.
type decision struct {
	relevant bool
	score    float64
	evidence float64 // the absolute evidence, compared with MinEvidence
}

// confidence measures how sure a verdict is (see above).
func (p *Params) confidence(d decision, s spread) float64 {
	return defaultConfidenceScales.confidence(p, d, s)
}

func (c confidenceScales) confidence(p *Params, d decision, s spread) float64 {
	var contrast, relative float64 // relative: signed distance above the cut
	if s.n > 1 && s.mean > 0 && s.best > 0 {
		contrast = unit(s.sd / s.mean / c.contrast)
		relative = (d.score - s.cut) / (c.relative * s.best)
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
	var conf float64
	if d.score < s.cut {
		conf = contrast * unit(-relative)
	}
	if d.evidence < p.MinEvidence {
		conf = max(conf, unit((p.MinEvidence-d.evidence)/(c.absent*p.MinEvidence)))
	}
	return unit(conf)
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
	b = appendFixed(b, c, 2)
	return append(b, ')')
}
