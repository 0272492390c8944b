package scoring

import "math"

// Difference is the difference of two means, with the half-width of its
// two-sided 95% confidence interval: the true difference is within
// Value ± HalfWidth with 95% confidence.
type Difference struct {
	// Value is the second mean minus the first.
	Value float64
	// HalfWidth is +Inf when either side has fewer than two values.
	HalfWidth float64
	// DF is the Welch–Satterthwaite degrees of freedom behind HalfWidth.
	DF float64
}

// Significant reports whether the interval excludes zero: the two means
// differ at the 95% level.
func (d Difference) Significant() bool { return math.Abs(d.Value) > d.HalfWidth }

// Welch compares the means of two independent samples, b − a, with Welch's
// t-test: each side keeps its own variance, and Student's t at the
// Welch–Satterthwaite degrees of freedom (rounded down, which widens the
// interval a little) stands in for the normal 1.96, which small samples
// would make too narrow.
func Welch(a, b Stats) Difference {
	d := Difference{Value: b.Mean() - a.Mean(), HalfWidth: math.Inf(1)}
	if a.n < 2 || b.n < 2 {
		return d
	}
	va, vb := a.Variance()/float64(a.n), b.Variance()/float64(b.n)
	se2 := va + vb
	if se2 == 0 {
		// Two constant samples: the difference is known exactly.
		d.HalfWidth, d.DF = 0, float64(a.n+b.n-2)
		return d
	}
	d.DF = se2 * se2 / (va*va/float64(a.n-1) + vb*vb/float64(b.n-1))
	// DF is at least the smaller side's n − 1; the margin keeps rounding
	// error from taking it below.
	df := max(int64(math.Floor(d.DF+1e-9)), 1)
	d.HalfWidth = tQuantile975(df) * math.Sqrt(se2)
	return d
}
