package main

import (
	"math"
	"testing"
)

// constant is a judge's canary counters over steps when each step adds the
// same confusion-matrix cells (relevant/relevant, relevant/irrelevant,
// irrelevant/relevant, irrelevant/irrelevant).
func constant(steps int, perStep [cells]float64) canaryCounters {
	var c canaryCounters
	for i := range c.verdicts {
		c.verdicts[i] = make([]float64, steps+1)
		for s := range c.verdicts[i] {
			c.verdicts[i][s] = perStep[i] * float64(s)
		}
	}
	return c
}

// A window against values worked out by hand: 27 of 30 relevant chunks
// and 63 of 70 irrelevant ones judged right; 34 verdicts relevant.
// Accuracy 0.9, chance 0.3 · 0.34 + 0.7 · 0.66 = 0.564, kappa
// 0.336 / 0.436.
func TestWindowAgreement(t *testing.T) {
	c := constant(10, [cells]float64{2.7, 0.3, 0.7, 6.3})
	a, ok := window(c, 0, 10)
	if !ok || a.n != 100 || math.Abs(a.accuracy-0.9) > 1e-12 || math.Abs(a.chance-0.564) > 1e-12 || math.Abs(a.kappa-0.336/0.436) > 1e-12 {
		t.Errorf("%+v", a)
	}
	if se := math.Sqrt(0.9*0.1/100) / 0.436; math.Abs(a.kappaStderr-se) > 1e-12 {
		t.Errorf("kappa's standard error %v, want %v", a.kappaStderr, se)
	}
	// A judge that calls everything relevant against labels that are all
	// relevant: chance is 1, kappa undefined.
	if a, ok := window(constant(10, [cells]float64{1, 0, 0, 0}), 0, 10); !ok || a.ok {
		t.Errorf("all one class: %+v", a)
	}
	if _, ok := window(c, 5, 5); ok {
		t.Error("an empty window has statistics")
	}
}

// A judge at the floor from the start fires an hour after it has 150
// verdicts in its window; a good one never, with or without a baseline.
func TestReplayFloorAndFor(t *testing.T) {
	const steps = 6 * 12
	// 10 verdicts a step, accuracy 0.46, kappa (0.46 - 0.38) / 0.62.
	poor := replay(constant(steps, [cells]float64{2.8, 0.2, 5.2, 1.8}), steps, minDrop)
	// 150 verdicts at step 15: pending 15-26, firing 27-72.
	if poor.firstFiring != 27 || poor.pending != forSteps || poor.firing != steps-26 || poor.longest != steps-14 {
		t.Errorf("poor judge: %+v", poor)
	}
	if good := replay(constant(steps, [cells]float64{2.7, 0.3, 0.7, 6.3}), steps, minDrop); good.firstFiring != -1 || good.longest != 0 {
		t.Errorf("good judge: %+v", good)
	}
}

// The design of RAGJudgeDrifted on the noise model of the test file: a
// steady judge rarely fires in a fortnight; one that turns random always
// does, within hours.
func TestReplayFalseAlarmsAreRare(t *testing.T) {
	const fortnights, steps, changeAt = 20, 14 * day, 8 * day
	for i := range fortnights {
		if tl := replay(draw(uint64(100+i), 200, steadyJudge, steps), steps, minDrop); tl.firstFiring >= 0 {
			t.Errorf("seed %d: a steady judge fired at step %d", 100+i, tl.firstFiring)
		}
		random := judgeModel{changeAt: changeAt * stepMinutes, random: true}
		first := replay(draw(uint64(100+i), 200, random, steps), steps, minDrop).firstFiringFrom(changeAt)
		if first < 0 || first-changeAt > 3*60/stepMinutes {
			t.Errorf("seed %d: the judge turned random at step %d, fired at step %d", 100+i, changeAt, first)
		}
	}
}
