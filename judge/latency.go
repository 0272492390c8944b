package judge

import "time"

// latencyEstimate is a moving average of the latency of successful
// requests, with which the scheduler tells whether queued work can finish
// before its deadline. mean is zero until warmup requests have succeeded
// (their plain average seeds it): the first requests pay for new
// connections (a TLS handshake against a remote provider), and a judgement
// refused on one slow first reply would be refused for nothing. Until then
// nothing is refused for lack of capacity.
type latencyEstimate struct {
	mean   time.Duration
	warmup int // samples that seed the mean: the number of workers
	n      int
	sum    time.Duration
}

// latencyWeight is the weight of the newest sample.
const latencyWeight = 0.2

func (l *latencyEstimate) add(d time.Duration) {
	if l.n < max(l.warmup, 1) {
		l.n++
		l.sum += d
		if l.n == max(l.warmup, 1) {
			l.mean = l.sum / time.Duration(l.n)
		}
		return
	}
	l.mean = time.Duration(latencyWeight*float64(d) + (1-latencyWeight)*float64(l.mean))
}
