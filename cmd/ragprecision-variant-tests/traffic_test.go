package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPoissonMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mean := range []float64{0.5, 2, 6} {
		var sum, squares float64
		const n = 20000
		for range n {
			k := float64(poisson(rng, mean))
			sum += k
			squares += k * k
		}
		m := sum / n
		variance := squares/n - m*m
		if math.Abs(m-mean) > 0.05*mean || math.Abs(variance-mean) > 0.1*mean {
			t.Errorf("mean %v: drew mean %.3f, variance %.3f", mean, m, variance)
		}
	}
}

// The daily cycle: lowest at midnight, highest at noon.
func TestTrafficCycle(t *testing.T) {
	if lo, hi := dayTraffic.mean(0), dayTraffic.mean(12*60); math.Abs(lo-2) > 1e-9 || math.Abs(hi-6) > 1e-9 {
		t.Errorf("midnight %v, noon %v", lo, hi)
	}
}

// Counters only grow, a worse ranking scores lower on average, and the same
// seed draws the same day.
func TestSimulate(t *testing.T) {
	a, b := worseVariant.draw(7), worseVariant.draw(7)
	for m := 1; m <= day; m++ {
		if a[0].count[m] < a[0].count[m-1] || a[0].sum[m] < a[0].sum[m-1] || a[0].squares[m] < a[0].squares[m-1] {
			t.Fatalf("minute %d: a counter went down", m)
		}
	}
	if a[1].sum[day] != b[1].sum[day] {
		t.Error("the same seed drew two days")
	}
	if better, worse := a[0].sum[day]/a[0].count[day], a[1].sum[day]/a[1].count[day]; worse >= better-0.03 {
		t.Errorf("mean CP %.3f with the worse ranking, %.3f with the baseline", worse, better)
	}
}
