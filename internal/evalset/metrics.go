package evalset

import (
	"fmt"
	"math"

	"github.com/ragprecision/ragprecision/scoring"
)

// Metrics compares a judge's verdicts with the human labels over a set of
// retrievals. Positive means relevant.
type Metrics struct {
	Retrievals int
	Chunks     int
	// Confusion counts over all chunks.
	TP, FP, FN, TN int
	// Micro-averaged over all chunks. Precision is 0 when nothing was judged
	// relevant; recall is 0 when nothing is truly relevant.
	Precision, Recall, F1, Accuracy float64
	// Kappa is Cohen's kappa of the verdicts against the labels; NaN when
	// undefined (see CohenKappa).
	Kappa float64
	// CPMAE is the mean over retrievals of |CP(verdicts) - CP(labels)|.
	CPMAE float64
	// MeanJudgedCP and MeanTrueCP are the mean CP over retrievals.
	MeanJudgedCP, MeanTrueCP float64
}

// Tally gathers per-retrieval results; Metrics forms the ratios. The zero
// value is ready to use; it keeps counts only, whatever the number of
// retrievals.
type Tally struct {
	m                        Metrics
	absErr, judgedCP, trueCP float64
}

// Add records one retrieval's verdicts against its labels, both in rank
// order. They must be of the same length.
func (t *Tally) Add(judged, labels []bool) error {
	if len(judged) != len(labels) {
		return fmt.Errorf("%d verdicts for %d chunks", len(judged), len(labels))
	}
	t.m.Retrievals++
	t.m.Chunks += len(labels)
	for i, l := range labels {
		switch j := judged[i]; {
		case j && l:
			t.m.TP++
		case j && !l:
			t.m.FP++
		case !j && l:
			t.m.FN++
		default:
			t.m.TN++
		}
	}
	// A retrieval with no chunks has no CP; it counts towards the verdict
	// totals (which it leaves unchanged) but not towards CP means.
	js, ok := scoring.ContextualPrecision(judged, 0)
	if !ok {
		return nil
	}
	ls, _ := scoring.ContextualPrecision(labels, 0)
	t.absErr += math.Abs(js.Value - ls.Value)
	t.judgedCP += js.Value
	t.trueCP += ls.Value
	return nil
}

// Metrics returns the ratios of what was added.
func (t *Tally) Metrics() Metrics {
	m := t.m
	m.Precision = ratio(m.TP, m.TP+m.FP)
	m.Recall = ratio(m.TP, m.TP+m.FN)
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	m.Accuracy = ratio(m.TP+m.TN, m.Chunks)
	m.Kappa = CohenKappa(m.TP, m.FP, m.FN, m.TN)
	if m.Retrievals > 0 {
		n := float64(m.Retrievals)
		m.CPMAE = t.absErr / n
		m.MeanJudgedCP = t.judgedCP / n
		m.MeanTrueCP = t.trueCP / n
	}
	return m
}

// CohenKappa is Cohen's kappa for two raters on a yes/no question, from the
// 2x2 table of their answers (tp: both yes; fp: judge yes, label no; fn:
// judge no, label yes; tn: both no):
//
//	kappa = (po - pe) / (1 - pe)
//	po = (tp + tn) / n                            observed agreement
//	pe = ((tp+fp)(tp+fn) + (fn+tn)(fp+tn)) / n²   agreement expected by chance
//
// 1 is perfect agreement, 0 no better than chance, negative worse. It is
// NaN when undefined: with no items, or when both raters gave one and the
// same answer to everything (pe = 1).
func CohenKappa(tp, fp, fn, tn int) float64 {
	n := float64(tp + fp + fn + tn)
	if n == 0 {
		return math.NaN()
	}
	po := float64(tp+tn) / n
	pe := (float64(tp+fp)*float64(tp+fn) + float64(fn+tn)*float64(fp+tn)) / (n * n)
	if pe == 1 {
		return math.NaN()
	}
	return (po - pe) / (1 - pe)
}

func ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}
