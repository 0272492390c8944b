package main

import (
	"math"
	"math/rand/v2"

	"github.com/ragprecision/ragprecision/scoring"
)

// retriever is a variant's noise model: each retrieval returns len(relevance)
// chunks; with probability answerable the corpus holds an answer, and then
// the chunk at rank k is relevant with probability relevance[k-1]; otherwise
// none is (a miss whatever the ranking).
type retriever struct {
	answerable float64
	relevance  []float64
}

// traffic is the scored retrievals of one variant a minute: a Poisson count
// whose mean follows a daily cycle, from (1-swing)·perMinute at night to
// (1+swing)·perMinute at the peak.
type traffic struct {
	perMinute, swing float64
}

func (t traffic) mean(minute int) float64 {
	return t.perMinute * (1 + t.swing*math.Sin(2*math.Pi*float64(minute-6*60)/(24*60)))
}

// counters are a variant's cumulative rag_contextual_precision _count, _sum
// and squares at the end of each minute, as Prometheus scrapes them.
type counters struct {
	count, sum, squares []float64
}

// simulate draws minutes of one variant's scores.
func simulate(rng *rand.Rand, r retriever, t traffic, minutes int) counters {
	c := counters{count: make([]float64, minutes+1), sum: make([]float64, minutes+1), squares: make([]float64, minutes+1)}
	verdicts := make([]bool, len(r.relevance))
	var n, s, q float64
	for m := 1; m <= minutes; m++ {
		for range poisson(rng, t.mean(m)) {
			answerable := rng.Float64() < r.answerable
			for k, p := range r.relevance {
				verdicts[k] = answerable && rng.Float64() < p
			}
			cp, _ := scoring.ContextualPrecision(verdicts, 0)
			n++
			s += cp.Value
			q += cp.Value * cp.Value
		}
		// Scraped values as the test file writes them: 4 decimals.
		c.count[m], c.sum[m], c.squares[m] = n, math.Round(s*1e4)/1e4, math.Round(q*1e4)/1e4
	}
	return c
}

// poisson draws a Poisson count by Knuth's method (means of a few dozen).
func poisson(rng *rand.Rand, mean float64) int {
	limit, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= limit {
			return k
		}
		k++
	}
}
