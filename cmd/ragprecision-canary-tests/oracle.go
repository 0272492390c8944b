package main

import "math"

// The rules' parameters that the oracle repeats, in steps of 5 minutes
// where they are times: the canary's window (6h), its baseline (the week
// before it), the window's guard, the z of the test, the kappa floor, and
// RAGJudgeDrifted's for: (1h).
const (
	windowSteps   = 6 * 60 / stepMinutes
	baselineSteps = 7 * 24 * 60 / stepMinutes
	minVerdicts   = 150
	z95           = 1.96
	kappaFloor    = 0.4
	forSteps      = 60 / stepMinutes
)

// minDrop is the rules' smallest drop of agreement that counts; -simulate
// tries others.
const minDrop = 0.04

// agreement is a window's confusion matrix as the canary rules reduce it,
// operation for operation, so that a comparison near its threshold goes the
// same way: n verdicts, accuracy, chance agreement and kappa (ok false when
// the window has no verdicts or chance is 1).
type agreement struct {
	n, accuracy, chance, kappa, kappaStderr float64
	ok                                      bool
}

// window reduces the counters' increase over the steps (from, to]: the
// rules' range selectors hold the samples from `from` to `to`, and a counter
// that starts at 0 is not extrapolated before its first sample.
func window(c canaryCounters, from, to int) (agreement, bool) {
	from = max(from, 0)
	if to <= from {
		return agreement{}, false
	}
	var d [cells]float64
	for i := range d {
		d[i] = c.verdicts[i][to] - c.verdicts[i][from]
	}
	a := agreement{n: d[0] + d[1] + d[2] + d[3]}
	if a.n <= 0 {
		return a, true
	}
	// The conversions round each product, as PromQL does, instead of
	// letting the compiler fuse a multiply and an add.
	labelsRelevant := (d[relevantRelevant] + d[relevantIrrelevant]) / a.n
	verdictsRelevant := (d[relevantRelevant] + d[irrelevantRelevant]) / a.n
	a.accuracy = (d[relevantRelevant] + d[irrelevantIrrelevant]) / a.n
	a.chance = float64(labelsRelevant*verdictsRelevant) + float64((1-labelsRelevant)*(1-verdictsRelevant))
	if 1-a.chance > 0 {
		a.kappa = (a.accuracy - a.chance) / (1 - a.chance)
		a.kappaStderr = math.Sqrt(float64(a.accuracy*(1-a.accuracy))/a.n) / (1 - a.chance)
		a.ok = true
	}
	return a, true
}

// drifted is RAGJudgeDrifted's condition at a step: enough verdicts in the
// window, and either agreement significantly and materially below the
// baseline's (which holds at least as many verdicts) or kappa significantly
// below the floor.
func drifted(c canaryCounters, step int, smallestDrop float64) bool {
	now, ok := window(c, step-windowSteps, step)
	if !ok || now.n < minVerdicts || now.n <= 0 {
		return false
	}
	if now.ok && float64(now.kappa+float64(z95*now.kappaStderr)) < kappaFloor {
		return true
	}
	base, ok := window(c, step-windowSteps-baselineSteps, step-windowSteps)
	if !ok || base.n < now.n {
		return false
	}
	drop := base.accuracy - now.accuracy
	spread := float64(float64(now.accuracy*(1-now.accuracy))/now.n) + float64(float64(base.accuracy*(1-base.accuracy))/base.n)
	return drop > float64(z95*math.Sqrt(spread)) && drop > smallestDrop
}

// alertTimeline is what RAGJudgeDrifted does over the steps replayed: how
// many evaluations found it pending and firing, its longest spell of the
// condition in steps, the step it first fired (-1: never), and whether it
// fired at each step.
type alertTimeline struct {
	pending, firing, longest, firstFiring int
	firingAt                              []bool
}

// firstFiringFrom is the first step from `from` on at which the alert
// fired, or -1.
func (tl alertTimeline) firstFiringFrom(from int) int {
	for s := from; s < len(tl.firingAt); s++ {
		if tl.firingAt[s] {
			return s
		}
	}
	return -1
}

func replay(c canaryCounters, steps int, smallestDrop float64) alertTimeline {
	tl := alertTimeline{firstFiring: -1, firingAt: make([]bool, steps+1)}
	since := -1
	for s := 0; s <= steps; s++ {
		if !drifted(c, s, smallestDrop) {
			since = -1
			continue
		}
		if since < 0 {
			since = s
		}
		tl.longest = max(tl.longest, s-since+1)
		if s-since < forSteps {
			tl.pending++
			continue
		}
		tl.firing++
		tl.firingAt[s] = true
		if tl.firstFiring < 0 {
			tl.firstFiring = s
		}
	}
	return tl
}
