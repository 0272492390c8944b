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
	// OutcomeCancelled is a request abandoned because every judgement that
	// needed it reached its deadline, or the judge was closed.
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every Outcome, for metric series created up front.
var Outcomes = []Outcome{OutcomeOK, OutcomeRetry, OutcomeError, OutcomeCancelled}

// Observer receives what the judge does, for the processor's telemetry.
// Methods are called concurrently, never under the judge's locks, and must
// not block.
type Observer interface {
	// JudgeRequest is called once per request that reached the transport
	// (requests the client library refused to send are not requests), with
	// the purpose of the judgement that paid for it, the failure's reason
	// for retry and error outcomes and the tokens the reply reported (zero
	// when there was no reply).
	JudgeRequest(purpose Purpose, outcome Outcome, reason Reason, latency time.Duration, usage Usage)
	// CacheLookups is called as a judgement's chunks are looked up, with
	// the number answered without a request of their own (from the verdict
	// cache, or by a request for the same verdict already in flight) and
	// the number that needed one; over a judgement they add up to its
	// chunks (empty chunks aside).
	CacheLookups(hits, misses int)
	// JudgeHealth is called when the judge starts failing (err is the
	// failure that opened the health breaker) and when it recovers (nil).
	JudgeHealth(err error)
}

type nopObserver struct{}

func (nopObserver) JudgeRequest(Purpose, Outcome, Reason, time.Duration, Usage) {}
func (nopObserver) CacheLookups(int, int)                                       {}
func (nopObserver) JudgeHealth(error)                                           {}
