package judge

import (
	"math"
	"sync"
	"time"
)

// budget is a token bucket of judge requests refilled at rate per second and
// holding at most one second's worth. A judgement that does not fit may wait
// for the refill, up to a horizon its caller gives (the engine gives what
// its deadline leaves room for): it reserves its requests at once, leaving
// the bucket in debt, and its requests are sent once the refill has paid
// for them. One that would wait longer is refused at once, so that no
// backlog builds up beyond what can still be judged in time. Spans arrive
// at random: a bucket that never lets one wait refuses a share of them even
// well below the budget (about one in five at 80% of it, with five requests
// a span and a budget of 10), and which ones depends on load. A judgement
// needing more than the bucket holds is admitted from a full bucket and
// leaves it in debt, so that large spans are delayed by the refill rather
// than refused forever; golang.org/x/time/rate cannot express that debt
// (ReserveN refuses n > burst).
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
	_, ok := b.reserve(n, 0)
	return ok
}

// reserve reserves n requests if the bucket has them within maxWait, and
// reports how long until it has: the requests are to be sent no earlier.
// Otherwise it reports false and reserves nothing.
func (b *budget) reserve(n int, maxWait time.Duration) (time.Duration, bool) {
	if n <= 0 {
		return 0, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	var wait time.Duration
	if short := math.Min(float64(n), b.burst) - b.tokens; short > 0 {
		if b.rate <= 0 {
			return 0, false
		}
		wait = time.Duration(math.Ceil(short / b.rate * float64(time.Second)))
		if wait > maxWait {
			return 0, false
		}
	}
	b.tokens -= float64(n)
	return wait, true
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
