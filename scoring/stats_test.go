package scoring

import (
	"math"
	"math/rand/v2"
	"testing"
)

func direct(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	variance /= float64(len(xs) - 1)
	return mean, variance
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestStatsAgainstDirectComputation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1000)
	var s Stats
	for i := range xs {
		xs[i] = r.Float64()
		s.Add(xs[i])
	}
	mean, variance := direct(xs)
	if s.Count() != 1000 || !near(s.Mean(), mean, 1e-12) || !near(s.Variance(), variance, 1e-12) {
		t.Fatalf("got n=%d mean=%v var=%v, want 1000 %v %v", s.Count(), s.Mean(), s.Variance(), mean, variance)
	}
	if !near(s.StdDev(), math.Sqrt(variance), 1e-12) {
		t.Fatalf("stddev %v", s.StdDev())
	}
	// n-1 = 999 degrees of freedom: t(0.975) = 1.962341 (tables).
	want := 1.962341461 * math.Sqrt(variance) / math.Sqrt(1000)
	if !near(s.CI95(), want, 1e-6) {
		t.Fatalf("CI95 = %v, want %v", s.CI95(), want)
	}
}

// Values near 1e9 with tiny spread defeat the naive sum-of-squares formula;
// Welford keeps them.
func TestStatsNumericallyStable(t *testing.T) {
	var s Stats
	for _, x := range []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16} {
		s.Add(x)
	}
	if !near(s.Variance(), 30, 1e-9) {
		t.Fatalf("variance %v, want 30", s.Variance())
	}
}

func TestStatsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var whole, a, b, c Stats
	for i := range 777 {
		x := r.NormFloat64()*0.2 + 0.6
		whole.Add(x)
		switch i % 3 {
		case 0:
			a.Add(x)
		case 1:
			b.Add(x)
		default:
			c.Add(x)
		}
	}
	var merged Stats
	merged.Merge(a)
	merged.Merge(Stats{}) // merging empty is a no-op
	merged.Merge(b)
	merged.Merge(c)
	if merged.Count() != whole.Count() || !near(merged.Mean(), whole.Mean(), 1e-12) || !near(merged.Variance(), whole.Variance(), 1e-12) {
		t.Fatalf("merged %+v, whole %+v", merged, whole)
	}
	var empty Stats
	empty.Merge(a)
	if empty != a {
		t.Fatalf("merge into empty: %+v, want %+v", empty, a)
	}
}

func TestStatsSmallSamples(t *testing.T) {
	var s Stats
	if s.Mean() != 0 || s.Variance() != 0 || !math.IsInf(s.CI95(), 1) || s.SamplesFor(0.05) != 0 {
		t.Fatal("empty stats")
	}
	s.Add(0.5)
	if s.Variance() != 0 || !math.IsInf(s.CI95(), 1) {
		t.Fatal("one value has no spread")
	}
	s.Add(1.5)
	// mean 1, sd sqrt(0.5), df 1: t = 12.7062
	if want := 12.706204736 * math.Sqrt(0.5) / math.Sqrt(2); !near(s.CI95(), want, 1e-9) {
		t.Fatalf("CI95 %v want %v", s.CI95(), want)
	}
}

func TestTQuantile(t *testing.T) {
	// Reference values from standard t tables.
	for df, want := range map[int64]float64{1: 12.7062, 10: 2.2281, 30: 2.0423, 31: 2.0395, 40: 2.0211, 60: 2.0003, 120: 1.9799, 1000: 1.9623} {
		if got := tQuantile975(df); math.Abs(got-want) > 1e-4 {
			t.Errorf("t(0.975, %d) = %v, want %v", df, got, want)
		}
	}
}

func TestSamplesFor(t *testing.T) {
	var s Stats
	for _, x := range []float64{0, 1, 0, 1, 0, 1, 0, 1} {
		s.Add(x)
	}
	// sd = sqrt(8/7 * 0.25); n = (1.96 sd / 0.05)^2
	sd := math.Sqrt(2.0 / 7.0)
	want := int64(math.Ceil(math.Pow(1.959963984540054*sd/0.05, 2)))
	if got := s.SamplesFor(0.05); got != want {
		t.Fatalf("SamplesFor(0.05) = %d, want %d", got, want)
	}
	if s.SamplesFor(0) != 0 || s.SamplesFor(math.NaN()) != 0 {
		t.Fatal("non-positive half-width")
	}
}
