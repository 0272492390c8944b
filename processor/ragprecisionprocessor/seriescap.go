package ragprecisionprocessor

import "sync"

// series is what the metrics of one retrieval are labelled by: its
// service_name, data_source and variant ("" without attributes.variant).
type series struct {
	service, dataSource, variant string
}

// seriesLimiter caps the distinct series of the metrics at max_series. Span
// names make data_source unbounded in the worst case, and every series
// multiplies into dozens of Prometheus series; past the cap new ones are
// recorded as "other" so that scores still count.
type seriesLimiter struct {
	mu   sync.Mutex
	max  int
	seen map[series]struct{}
	// other is what a series beyond the cap is recorded as.
	other series
}

func newSeriesLimiter(max int, variants bool) *seriesLimiter {
	l := &seriesLimiter{max: max, seen: make(map[series]struct{}), other: series{otherValue, otherValue, ""}}
	if variants {
		l.other.variant = otherValue
	}
	return l
}

// admit returns the series to record s as, and whether it was folded into
// "other".
func (l *seriesLimiter) admit(s series) (series, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[s]; ok {
		return s, false
	}
	if len(l.seen) >= l.max {
		return l.other, true
	}
	l.seen[s] = struct{}{}
	return s, false
}
