package judge

import "time"

// What the tests of package judge_test need to see of the engine's insides.
const (
	BreakerThreshold = breakerThreshold
	FirstProbeAfter  = firstProbeAfter
	MaxRetryAfter    = maxRetryAfter
)

// CacheKey is the key e files a judgement of chunks under.
func CacheKey(e *Engine, query, reference string, chunks []string) [32]byte {
	return e.keys.key(query, reference, chunks)
}

// LatencyMean is e's current estimate of a request's latency.
func LatencyMean(e *Engine) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.latency.mean
}
