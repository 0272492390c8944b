package hotpotqa

import (
	"fmt"

	"github.com/ragprecision/ragprecision/internal/evalset"
)

// The in-memory evaluation below predates the streaming one in
// cmd/ragprecision-eval and is kept for the builtin:lexical tuning tests
// (judge/internal/lexical), which score parameter variants over the loaded
// questions many times. Metrics, splits and the naive baseline are
// evalset's, so both report the same figures.

// VerdictFunc judges the chunks of one retrieval; see evalset.VerdictFunc.
type VerdictFunc = evalset.VerdictFunc

// Metrics compares judged verdicts with the human ones; see evalset.Metrics.
type Metrics = evalset.Metrics

// NaiveThreshold is evalset.NaiveThreshold.
const NaiveThreshold = evalset.NaiveThreshold

// Naive is evalset.Naive, the baseline a lexical judge has to beat.
func Naive(threshold float64) VerdictFunc { return evalset.Naive(threshold) }

// Options controls how questions are presented to the judge.
type Options struct {
	// Titles presents each chunk as "title: paragraph" instead of the
	// paragraph alone.
	Titles bool
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

// Evaluate runs judge on every question and compares its verdicts with the
// human labels. A judge error excludes that question and is counted in
// Report.Failed; a verdict slice of the wrong length is a bug in the judge
// and fails the whole evaluation.
func Evaluate(qs []Question, judge VerdictFunc, opts Options) (Report, error) {
	var all, yesNo, other evalset.Tally
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
		truth := q.Truth()
		if err := all.Add(judged, truth); err != nil {
			return Report{}, fmt.Errorf("question %s: judge returned %w", q.ID, err)
		}
		if q.IsYesNo() {
			_ = yesNo.Add(judged, truth) // same lengths: checked above
		} else {
			_ = other.Add(judged, truth)
		}
	}
	r.All, r.YesNo, r.Other = all.Metrics(), yesNo.Metrics(), other.Metrics()
	return r, nil
}

// TrueMeanCP is the mean CP of the human verdicts, a check that the data was
// loaded as intended (0.3844 on the 500-question sample, docs/EVAL_FORMAT.md).
func TrueMeanCP(qs []Question) float64 {
	var t evalset.Tally
	for _, q := range qs {
		l := q.Truth()
		_ = t.Add(l, l)
	}
	return t.Metrics().MeanTrueCP
}
