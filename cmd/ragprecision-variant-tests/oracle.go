package main

import "math"

// The rules' parameters that the oracle repeats: the window, the guards, the
// z of the 95% half-widths and the alert's for:, in minutes.
const (
	windowMinutes = 60
	minScores     = 30
	minGap        = 0.02
	z95           = 1.96
	forMinutes    = 60
)

// windowStats are the last hour's statistics of one variant at a minute, as
// the service_data_source_variant:rag_contextual_precision:* rules compute
// them from the counters' increases, operation for operation (x^2 is
// math.Pow, as in PromQL), so that a comparison near its threshold goes the
// same way.
type windowStats struct {
	n, mean, halfWidth float64
}

func statsAt(c counters, minute int) windowStats {
	from := max(minute-windowMinutes, 0)
	n := c.count[minute] - c.count[from]
	if n <= 0 {
		return windowStats{}
	}
	s := c.sum[minute] - c.sum[from]
	q := c.squares[minute] - c.squares[from]
	mean := s / n
	st := windowStats{n: n, mean: mean, halfWidth: math.Inf(1)}
	if n > 1 {
		sd := math.Sqrt(math.Max(q/n-math.Pow(mean, 2), 0) * n / (n - 1))
		st.halfWidth = z95 * sd / math.Sqrt(n)
	}
	return st
}

// alertTimeline is what RAGVariantRegressed does to each variant over the
// minutes replayed: how many evaluations found it pending and firing, its
// longest spell of the condition, and the minute it first fired (-1: never).
type alertTimeline struct {
	pending, firing, longest, firstFiring []int
}

// replay evaluates RAGVariantRegressed every minute over the variants'
// counters, with a for: of forMin minutes: each variant with 30 scores in
// the hour against the best such variant, gap > sqrt(h² + h_best²) and
// gap >= 0.02.
func replay(variants []counters, minutes, forMin int) alertTimeline {
	k := len(variants)
	tl := alertTimeline{pending: make([]int, k), firing: make([]int, k), longest: make([]int, k), firstFiring: make([]int, k)}
	activeSince := make([]int, k)
	for v := range variants {
		tl.firstFiring[v], activeSince[v] = -1, -1
	}
	stats := make([]windowStats, k)
	for m := 0; m <= minutes; m++ {
		best := -1
		for v, c := range variants {
			stats[v] = statsAt(c, m)
			if stats[v].n >= minScores && (best < 0 || stats[v].mean > stats[best].mean) {
				best = v
			}
		}
		for v := range variants {
			held := best >= 0 && v != best && stats[v].n >= minScores &&
				stats[best].mean-stats[v].mean > math.Sqrt(math.Pow(stats[v].halfWidth, 2)+math.Pow(stats[best].halfWidth, 2)) &&
				stats[best].mean-stats[v].mean >= minGap
			if !held {
				activeSince[v] = -1
				continue
			}
			if activeSince[v] < 0 {
				activeSince[v] = m
			}
			tl.longest[v] = max(tl.longest[v], m-activeSince[v]+1)
			if m-activeSince[v] < forMin {
				tl.pending[v]++
				continue
			}
			tl.firing[v]++
			if tl.firstFiring[v] < 0 {
				tl.firstFiring[v] = m
			}
		}
	}
	return tl
}
