package judge

import "testing"

// MinRetryBackoff, which configuration relies on to refuse a timeout that
// leaves no room for a retry, is the engine's shortest backoff.
func TestMinRetryBackoffIsTheShortestBackoff(t *testing.T) {
	for _, jitter := range []float64{0, 0.5, 0.999} {
		e := testEngine(t, Settings{MaxConcurrency: 1, MaxChunkChars: 100}, &SlowBackend{}, WithJitter(func() float64 { return jitter }))
		for attempt := range 20 {
			if d := e.backoff(attempt); d < MinRetryBackoff {
				t.Fatalf("backoff(%d) = %v with jitter %v, below MinRetryBackoff %v", attempt, d, jitter, MinRetryBackoff)
			}
		}
		if jitter == 0 && e.backoff(0) != MinRetryBackoff {
			t.Fatalf("backoff(0) = %v without jitter, want MinRetryBackoff %v", e.backoff(0), MinRetryBackoff)
		}
	}
}
