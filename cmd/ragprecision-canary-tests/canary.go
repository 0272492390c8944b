package main

import (
	"math"
	"math/rand/v2"

	"github.com/ragprecision/ragprecision/scoring"
)

// The canary as the processor runs it at its defaults: every hour, 50
// labelled retrievals of the file (the next 50, round the file), spread
// over the hour; counters scraped every 5 minutes.
const (
	stepMinutes        = 5
	runMinutes         = 60
	retrievalsPerRun   = 50
	stepsPerRun        = runMinutes / stepMinutes
	chunksPerRetrieval = 5
)

// canaryFile is a labelled canary file: for each chunk its label and how
// often a steady judge gets it wrong.
type canaryFile struct {
	labels    [][]bool
	errorRate [][]float64
}

// The file's noise model: relevant by rank with falling probability (a
// third of the chunks relevant); 70% of the retrievals are easy for the
// judge (it misjudges 3% of their chunks), 30% hard (25%): errors cluster
// in retrievals, as they do on real sets.
var (
	relevanceByRank = [chunksPerRetrieval]float64{0.6, 0.4, 0.3, 0.2, 0.15}
	hardShare       = 0.3
	easyError       = 0.03
	hardError       = 0.25
)

func newCanaryFile(rng *rand.Rand, retrievals int) canaryFile {
	f := canaryFile{labels: make([][]bool, retrievals), errorRate: make([][]float64, retrievals)}
	for r := range retrievals {
		e := easyError
		if rng.Float64() < hardShare {
			e = hardError
		}
		f.labels[r] = make([]bool, chunksPerRetrieval)
		f.errorRate[r] = make([]float64, chunksPerRetrieval)
		for k := range chunksPerRetrieval {
			f.labels[r][k] = rng.Float64() < relevanceByRank[k]
			f.errorRate[r][k] = e
		}
	}
	return f
}

// judgeModel is how a judge answers at a minute: steadily wrong on each
// chunk with the file's error rate, each run drawn afresh (more noise than a
// judge at temperature 0, which repeats most of its verdicts); from
// changeAt on (when not negative) by a coin flip (random), or calling a
// further share lenient of the irrelevant chunks relevant.
type judgeModel struct {
	changeAt int
	random   bool
	lenient  float64
}

var steadyJudge = judgeModel{changeAt: -1}

func (j judgeModel) verdict(rng *rand.Rand, label bool, errorRate float64, minute int) bool {
	changed := j.changeAt >= 0 && minute >= j.changeAt
	if changed && j.random {
		return rng.Float64() < 0.5
	}
	if changed && !label && rng.Float64() < j.lenient {
		return true
	}
	if rng.Float64() < errorRate {
		return !label
	}
	return label
}

// Cells of the confusion matrix, in the order of the test series.
const (
	relevantRelevant = iota
	relevantIrrelevant
	irrelevantRelevant
	irrelevantIrrelevant
	cells
)

func cell(label, verdict bool) int {
	switch {
	case label && verdict:
		return relevantRelevant
	case label:
		return relevantIrrelevant
	case verdict:
		return irrelevantRelevant
	}
	return irrelevantIrrelevant
}

// canaryCounters are one judge's canary counters at the end of each step,
// as Prometheus scrapes them: the confusion matrix, retrievals judged, the
// sum of their CP errors and the runs that ended ok.
type canaryCounters struct {
	verdicts   [cells][]float64
	retrievals []float64
	cpAbsError []float64
	runs       []float64
}

// simulate runs the canary over steps steps with judge j.
func simulate(rng *rand.Rand, f canaryFile, j judgeModel, steps int) canaryCounters {
	var c canaryCounters
	for i := range c.verdicts {
		c.verdicts[i] = make([]float64, steps+1)
	}
	c.retrievals, c.cpAbsError, c.runs = make([]float64, steps+1), make([]float64, steps+1), make([]float64, steps+1)
	var tally [cells]float64
	var retrievals, cpError, runs float64
	next := 0 // the file's next retrieval
	verdicts := make([]bool, chunksPerRetrieval)
	for s := 1; s <= steps; s++ {
		// Retrieval i of a run is judged at minute i·60/50 of the run.
		for m := (s - 1) * stepMinutes; m < s*stepMinutes; m++ {
			for i := range retrievalsPerRun {
				if i*runMinutes/retrievalsPerRun != m%runMinutes {
					continue
				}
				labels, rates := f.labels[next], f.errorRate[next]
				for k, label := range labels {
					verdicts[k] = j.verdict(rng, label, rates[k], m)
					tally[cell(label, verdicts[k])]++
				}
				judged, _ := scoring.ContextualPrecision(verdicts, 0)
				truth, _ := scoring.ContextualPrecision(labels, 0)
				cpError += math.Abs(judged.Value - truth.Value)
				retrievals++
				next = (next + 1) % len(f.labels)
			}
		}
		if s%stepsPerRun == 0 {
			runs++
		}
		for i := range tally {
			c.verdicts[i][s] = tally[i]
		}
		// Scraped values as the test file writes them: 4 decimals.
		c.retrievals[s], c.cpAbsError[s], c.runs[s] = retrievals, math.Round(cpError*1e4)/1e4, runs
	}
	return c
}
