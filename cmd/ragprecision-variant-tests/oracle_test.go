package main

import (
	"math"
	"testing"
)

// The oracle's statistics of a window, against values worked out by hand:
// 3 scores of 1 and 3 of 0.5 in the hour.
func TestStatsAt(t *testing.T) {
	c := counters{
		count:   []float64{0, 2, 4, 6},
		sum:     []float64{0, 1.5, 3, 4.5},
		squares: []float64{0, 1.25, 2.5, 3.75},
	}
	st := statsAt(c, 3)
	sd := math.Sqrt((3.75/6 - 0.75*0.75) * 6 / 5)
	if st.n != 6 || st.mean != 0.75 || math.Abs(st.halfWidth-1.96*sd/math.Sqrt(6)) > 1e-15 {
		t.Errorf("%+v, want n 6, mean 0.75, half-width %v", st, 1.96*sd/math.Sqrt(6))
	}
	if st := statsAt(c, 0); st.n != 0 {
		t.Errorf("no scores yet: %+v", st)
	}
}

// Two variants whose scores never vary: the worse is flagged from the
// minute both have 30 scores, and fires an hour later; the better never.
func TestReplayFiresForTheWorseAfterFor(t *testing.T) {
	constant := func(perMinute, score float64) counters {
		c := counters{count: make([]float64, 121), sum: make([]float64, 121), squares: make([]float64, 121)}
		for m := range c.count {
			n := perMinute * float64(m)
			c.count[m], c.sum[m], c.squares[m] = n, n*score, n*score*score
		}
		return c
	}
	tl := replay([]counters{constant(10, 0.9), constant(10, 0.6)}, 120, 60)
	// 30 scores at minute 3: pending 3-62, firing 63-120.
	if tl.firstFiring[0] != -1 || tl.pending[0] != 0 || tl.firstFiring[1] != 63 || tl.pending[1] != 60 || tl.firing[1] != 58 || tl.longest[1] != 118 {
		t.Errorf("%+v", tl)
	}
}

// The design of RAGVariantRegressed on the noise model of the test file:
// two equal variants rarely fire within a day; a variant that ranks worse
// fires within the day, and the better one never does.
func TestReplayFalseAlarmsAreRare(t *testing.T) {
	const days = 60
	falseDays, detected := 0, 0
	for d := range days {
		tl := replay(equalVariants.draw(uint64(5000+d)), day, forMinutes)
		if tl.firstFiring[0] >= 0 || tl.firstFiring[1] >= 0 {
			falseDays++
		}
		tl = replay(worseVariant.draw(uint64(5000+d)), day, forMinutes)
		if tl.firstFiring[0] >= 0 {
			t.Errorf("day %d: the better variant fired", d)
		}
		if tl.firstFiring[1] >= 0 {
			detected++
		}
	}
	if falseDays > days/10 {
		t.Errorf("two equal variants fired on %d of %d days", falseDays, days)
	}
	if detected < days*9/10 {
		t.Errorf("the worse variant fired on only %d of %d days", detected, days)
	}
}
