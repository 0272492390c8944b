package judge

import "time"

// Outcome classifies one request to a judge endpoint.
type Outcome string

const (
	// OutcomeOK is a request whose reply followed the contract.
	OutcomeOK Outcome = "ok"
	// OutcomeRetry is a failed request that will be tried again.
	OutcomeRetry Outcome = "retry"
	// OutcomeError is a failed request that will not be tried again.
	OutcomeError Outcome = "error"
)

// Observer receives what the judge does, for the processor's telemetry.
// Methods are called concurrently and must not block.
type Observer interface {
	// JudgeRequest is called once per HTTP request to a judge endpoint, with
	// the tokens the reply reported (zero when there was no reply).
	JudgeRequest(outcome Outcome, latency time.Duration, usage Usage)
	// CacheLookups is called once per judgement with the number of chunks
	// answered without a request of their own (from the verdict cache, or
	// by a request for the same verdict already in flight) and the number
	// that needed one.
	CacheLookups(hits, misses int)
}

type nopObserver struct{}

func (nopObserver) JudgeRequest(Outcome, time.Duration, Usage) {}
func (nopObserver) CacheLookups(int, int)                      {}
