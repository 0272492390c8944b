package judge

import (
	"math"
	"sync"
	"time"
)

// budget is a token bucket of judge requests refilled at rate per second and
// holding at most one second's worth. It answers at once: a judgement that
// does not fit is refused, never queued, so that no backlog builds up behind
// a slow or expensive judge. A judgement needing more than the bucket holds
// is admitted from a full bucket and leaves it in debt, so that large spans
// are delayed by the refill rather than refused forever; golang.org/x/time/rate
// cannot express that debt (ReserveN refuses n > burst).
type budget struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	clock  Clock
}

func newBudget(perSecond float64, clock Clock) *budget {
	burst := math.Max(1, perSecond)
	return &budget{rate: perSecond, burst: burst, tokens: burst, last: clock.Now(), clock: clock}
}

// take reserves n requests, or reports false and reserves nothing.
func (b *budget) take(n int) bool {
	if n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	if b.tokens < math.Min(float64(n), b.burst) {
		return false
	}
	b.tokens -= float64(n)
	return true
}

// refund returns n requests reserved by take but not sent.
func (b *budget) refund(n int) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.tokens = math.Min(b.burst, b.tokens+float64(n))
	b.mu.Unlock()
}

// spend takes n requests whatever the bucket holds, leaving it in debt if
// need be: for requests of an admitted judgement that Admit had no reason
// to reserve.
func (b *budget) spend(n int) {
	b.mu.Lock()
	b.refillLocked()
	b.tokens -= float64(n)
	b.mu.Unlock()
}

func (b *budget) refillLocked() {
	now := b.clock.Now()
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(b.burst, b.tokens+elapsed.Seconds()*b.rate)
		b.last = now
	}
}
