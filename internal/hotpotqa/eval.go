package hotpotqa

import (
	"fmt"
	"math"

	"github.com/ragprecision/ragprecision/scoring"
)

// VerdictFunc judges the chunks of one retrieval, returning one relevance
// verdict per chunk in rank order. It is the shape every judge under
// evaluation is adapted to, offline or LLM-backed.
type VerdictFunc func(query, reference string, chunks []string) ([]bool, error)

// Options controls how questions are presented to the judge.
type Options struct {
	// Titles presents each chunk as "title: paragraph" instead of the
	// paragraph alone.
	Titles bool
}

// Metrics compares judged verdicts with the human ones over a set of
// questions.
type Metrics struct {
	Questions int
	Chunks    int
	// Confusion counts over all chunks; positive means relevant.
	TP, FP, FN, TN int
	// Micro-averaged over all chunks. Precision is 0 when nothing was judged
	// relevant; recall is 0 when nothing is truly relevant.
	Precision, Recall, F1, Accuracy float64
	// CPMAE is the mean over questions of |CP(judged) - CP(true)|.
	CPMAE float64
	// MeanJudgedCP and MeanTrueCP are the mean CP over questions.
	MeanJudgedCP, MeanTrueCP float64
}

// Report is the result of one evaluation.
type Report struct {
	All   Metrics // every question the judge answered
	YesNo Metrics // questions whose gold answer is "yes" or "no"
	Other Metrics // the rest
	// Failed counts questions the judge returned an error for; they are
	// left out of every metric. FirstError describes the first of them.
	Failed     int
	FirstError error
}

// accumulator gathers per-question results before the ratios are formed.
type accumulator struct {
	m                        Metrics
	absErr, judgedCP, trueCP float64
}

func (a *accumulator) add(judged, truth []bool) {
	a.m.Questions++
	a.m.Chunks += len(truth)
	for i, t := range truth {
		switch j := judged[i]; {
		case j && t:
			a.m.TP++
		case j && !t:
			a.m.FP++
		case !j && t:
			a.m.FN++
		default:
			a.m.TN++
		}
	}
	// A retrieval with no chunks has no CP; it still counts towards the
	// verdict totals (which it leaves unchanged) but not towards CP means.
	js, ok := scoring.ContextualPrecision(judged, 0)
	if !ok {
		return
	}
	ts, _ := scoring.ContextualPrecision(truth, 0)
	a.absErr += math.Abs(js.Value - ts.Value)
	a.judgedCP += js.Value
	a.trueCP += ts.Value
}

func (a *accumulator) metrics() Metrics {
	m := a.m
	m.Precision = ratio(m.TP, m.TP+m.FP)
	m.Recall = ratio(m.TP, m.TP+m.FN)
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	m.Accuracy = ratio(m.TP+m.TN, m.Chunks)
	if m.Questions > 0 {
		n := float64(m.Questions)
		m.CPMAE = a.absErr / n
		m.MeanJudgedCP = a.judgedCP / n
		m.MeanTrueCP = a.trueCP / n
	}
	return m
}

func ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// Evaluate runs judge on every question and compares its verdicts with the
// human labels. A judge error excludes that question and is counted in
// Report.Failed; a verdict slice of the wrong length is a bug in the judge
// and fails the whole evaluation.
func Evaluate(qs []Question, judge VerdictFunc, opts Options) (Report, error) {
	var all, yesNo, other accumulator
	var r Report
	for _, q := range qs {
		chunks := q.Chunks(opts.Titles)
		judged, err := judge(q.Text, q.Answer, chunks)
		if err != nil {
			r.Failed++
			if r.FirstError == nil {
				r.FirstError = fmt.Errorf("question %s: %w", q.ID, err)
			}
			continue
		}
		if len(judged) != len(chunks) {
			return Report{}, fmt.Errorf("question %s: judge returned %d verdicts for %d chunks", q.ID, len(judged), len(chunks))
		}
		truth := q.Truth()
		all.add(judged, truth)
		if q.IsYesNo() {
			yesNo.add(judged, truth)
		} else {
			other.add(judged, truth)
		}
	}
	r.All, r.YesNo, r.Other = all.metrics(), yesNo.metrics(), other.metrics()
	return r, nil
}

// TrueMeanCP is the mean CP of the human verdicts, a check that the data was
// loaded as intended (0.3844 on the full file).
func TrueMeanCP(qs []Question) float64 {
	var a accumulator
	for _, q := range qs {
		t := q.Truth()
		a.add(t, t)
	}
	return a.metrics().MeanTrueCP
}
