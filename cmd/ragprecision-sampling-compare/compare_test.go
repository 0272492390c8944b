package main

import (
	"testing"
	"time"
)

// A short run of the comparison (20 minutes, a 4-minute burst): adaptive
// sampling leaves under 1% of the selected spans to the budget, its mean
// covers the truth with its 95% interval, and the rare source gets its
// minimum; the fixed rate of the same spend leaves the rare source far
// short of it. (The tool's third row, a fixed rate spending the budget at
// quiet traffic, costs the most judge requests and is left to it.)
func TestAdaptiveSamplingAgainstFixedRate(t *testing.T) {
	if testing.Short() {
		t.Skip("20 simulated minutes through the processor, twice")
	}
	sc := defaultScenario()
	sc.length, sc.burstStart, sc.burstLength = 20*time.Minute, 10*time.Minute, 4*time.Minute
	rows, err := compare(sc, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + render(sc, rows))
	fixed, adaptive := rows[0], rows[1]
	if !adaptive.adaptive || fixed.adaptive {
		t.Fatalf("rows out of order: %+v", rows)
	}
	if s := adaptive.budgetShare(); s >= 0.01 || adaptive.selected < 100 {
		t.Errorf("adaptive: %.2f%% of %d selected spans refused by the budget, want under 1%%", 100*s, adaptive.selected)
	}
	if !adaptive.covers() {
		t.Errorf("adaptive: mean %.4f ± %.4f misses the true %.4f", adaptive.mean, adaptive.halfWidth, adaptive.truth)
	}
	owed := sc.minJudgedPerHour * sc.length.Hours()
	if float64(adaptive.rareJudged) < 0.9*owed {
		t.Errorf("adaptive: rare source judged %d times, owed %.0f", adaptive.rareJudged, owed)
	}
	if float64(fixed.rareJudged) > owed/2 {
		t.Errorf("fixed: rare source judged %d times at the same spend, owed %.0f: the comparison shows nothing", fixed.rareJudged, owed)
	}
}
