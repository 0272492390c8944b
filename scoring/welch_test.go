package scoring

import (
	"math"
	"testing"
)

func stats(xs ...float64) Stats {
	var s Stats
	for _, x := range xs {
		s.Add(x)
	}
	return s
}

// TestWelch holds the comparison against values computed independently
// (the Welch–Satterthwaite formula, and Student's t from the regularized
// incomplete beta function at 5 degrees of freedom).
func TestWelch(t *testing.T) {
	a := stats(0.2, 0.4, 0.35, 0.5)
	b := stats(0.9, 1, 0.8, 0.95, 1)
	d := Welch(a, b)
	if !near(d.Value, 0.5675, 1e-12) || !near(d.DF, 5.049311511545636, 1e-9) || !near(d.HalfWidth, 0.187251492595422, 1e-8) {
		t.Fatalf("got %+v, want 0.5675 ± 0.18725 at 5.049 df", d)
	}
	if !d.Significant() {
		t.Error("0.5675 ± 0.187 excludes zero")
	}
	// The other way round: the same interval about the opposite difference.
	r := Welch(b, a)
	if !near(r.Value, -d.Value, 1e-12) || !near(r.HalfWidth, d.HalfWidth, 1e-12) || !r.Significant() {
		t.Errorf("reversed: %+v", r)
	}
}

func TestWelchOverlappingSamples(t *testing.T) {
	d := Welch(stats(0.2, 0.9, 0.5, 0.7), stats(0.4, 1, 0.3, 0.8))
	if d.Significant() || !(d.HalfWidth > math.Abs(d.Value)) {
		t.Errorf("noisy samples 0.05 apart: %+v should not be significant", d)
	}
}

// With the smallest samples the interval is far wider than the normal
// approximation's: the t quantile at 1 degree of freedom is 12.7, not 1.96.
func TestWelchSmallSamples(t *testing.T) {
	d := Welch(stats(0, 1), stats(1, 1, 1))
	if !near(d.DF, 1, 1e-9) {
		t.Fatalf("df %v, want 1: all the spread is on the side of two", d.DF)
	}
	if want := 12.706204736 * math.Sqrt(0.5/2); !near(d.HalfWidth, want, 1e-9) {
		t.Errorf("half-width %v, want %v", d.HalfWidth, want)
	}
	for _, c := range []struct{ a, b Stats }{{stats(1), stats(0, 1)}, {stats(0, 1), Stats{}}} {
		if d := Welch(c.a, c.b); !math.IsInf(d.HalfWidth, 1) || d.Significant() {
			t.Errorf("a side with fewer than two values: %+v, want an infinite half-width", d)
		}
	}
	if d := Welch(stats(0.5, 0.5), stats(1, 1, 1)); d.HalfWidth != 0 || d.DF != 3 || !d.Significant() {
		t.Errorf("two constant samples: %+v, want the exact difference", d)
	}
}
