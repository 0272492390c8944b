package scoring

import "math"

// Stats accumulates count, mean and variance of a stream of scores with
// Welford's algorithm, so that long streams of values close to each other do
// not lose precision the way a naive sum of squares does. Two Stats built on
// disjoint shards of a stream merge into the Stats of the whole stream
// (Chan et al.'s parallel update), which is what lets per-replica or per-window
// accumulators be combined.
//
// The zero value is an empty accumulator. Stats is not safe for concurrent
// use; guard it or keep one per goroutine and Merge.
type Stats struct {
	n    int64
	mean float64
	m2   float64 // sum of squared deviations from the mean
}

// Add records one value.
func (s *Stats) Add(x float64) {
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// Merge folds o into s, as if every value added to o had been added to s.
func (s *Stats) Merge(o Stats) {
	switch {
	case o.n == 0:
		return
	case s.n == 0:
		*s = o
		return
	}
	n := s.n + o.n
	d := o.mean - s.mean
	s.mean += d * float64(o.n) / float64(n)
	s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/float64(n)
	s.n = n
}

// Count is the number of values recorded.
func (s Stats) Count() int64 { return s.n }

// Mean is the arithmetic mean; 0 when empty.
func (s Stats) Mean() float64 { return s.mean }

// Variance is the unbiased sample variance (n-1 denominator); 0 with fewer
// than two values.
func (s Stats) Variance() float64 {
	if s.n < 2 {
		return 0
	}
	return s.m2 / float64(s.n-1)
}

// StdDev is the sample standard deviation.
func (s Stats) StdDev() float64 { return math.Sqrt(s.Variance()) }

// CI95 is the half-width of the two-sided 95% confidence interval of the mean,
// using Student's t with n-1 degrees of freedom: the mean is within
// Mean() ± CI95() with 95% confidence. It is +Inf with fewer than two values,
// because one sample says nothing about spread.
func (s Stats) CI95() float64 {
	if s.n < 2 {
		return math.Inf(1)
	}
	return tQuantile975(s.n-1) * s.StdDev() / math.Sqrt(float64(s.n))
}

// t975 holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var t975 = [...]float64{
	12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
	2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
	2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
	2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
	2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
	2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
}

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom: exact table values up to 30, then the Cornish-Fisher expansion
// around the normal quantile, which is accurate to better than 1e-6 there.
func tQuantile975(df int64) float64 {
	if df <= int64(len(t975)) {
		return t975[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z +
		(z3+z)/(4*v) +
		(5*z5+16*z3+3*z)/(96*v*v) +
		(3*z7+19*z5+17*z3-15*z)/(384*v*v*v)
}

// SamplesFor estimates how many scored spans give a 95% confidence half-width
// of at most halfWidth, assuming the spread measured so far holds. Divided by
// the candidate rate it tells how high sampling_percentage must be to detect a
// change of that size within a window. It returns 0 when there is not enough
// data (fewer than two values) or halfWidth is not positive.
func (s Stats) SamplesFor(halfWidth float64) int64 {
	if s.n < 2 || !(halfWidth > 0) {
		return 0
	}
	const z = 1.959963984540054
	r := z * s.StdDev() / halfWidth
	return int64(math.Ceil(r * r))
}
