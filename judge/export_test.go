package judge

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
