package ragprecisionprocessor

import "sync"

// seriesLimiter caps the distinct (service_name, data_source) pairs of the
// metrics at max_series. Span names make data_source unbounded in the worst
// case, and every pair multiplies into a dozen Prometheus series; past the
// cap new pairs are recorded as ("other", "other") so that scores still
// count.
type seriesLimiter struct {
	mu   sync.Mutex
	max  int
	seen map[[2]string]struct{}
}

func newSeriesLimiter(max int) *seriesLimiter {
	return &seriesLimiter{max: max, seen: make(map[[2]string]struct{})}
}

// admit returns the labels to record a pair under, and whether it was
// folded into "other".
func (l *seriesLimiter) admit(service, dataSource string) (string, string, bool) {
	key := [2]string{service, dataSource}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[key]; ok {
		return service, dataSource, false
	}
	if len(l.seen) >= l.max {
		return otherValue, otherValue, true
	}
	l.seen[key] = struct{}{}
	return service, dataSource, false
}
