package judge

import "time"

// Breaker settings. The breaker opens when this many requests in a row have
// failed in ways that say the judge is unavailable (see Error.outage): a
// judge failing half of its requests opens it about once in a thousand
// runs, and a probe closes it again within a second.
const (
	breakerThreshold = 10
	firstProbeAfter  = time.Second
	maxProbeInterval = 30 * time.Second
)

// breaker tracks whether the judge is available. While it is open, new
// judgements are refused at once with the failure that opened it, and
// queued ones are failed with it, so that an outage reads as an outage
// (status judge_error with its reason) instead of timeouts or an exhausted
// budget, and no money or time is spent on a judge that is down. One
// judgement at a time is let through as a probe; its first success closes
// the breaker.
type breaker struct {
	failures  int
	open      bool
	last      *Error // the failure that opened it, or the latest while open
	nextProbe time.Time
	interval  time.Duration
	probing   bool // a probe is under way
}

// success records a request that got a valid reply; it reports whether
// that closed the breaker.
func (b *breaker) success() bool {
	b.failures = 0
	if !b.open {
		return false
	}
	b.open, b.last, b.probing, b.interval = false, nil, false, 0
	return true
}

// failure records a failed request; it reports whether that opened the
// breaker.
func (b *breaker) failure(e *Error, now time.Time) bool {
	if !e.outage() {
		b.failures = 0
		return false
	}
	b.failures++
	if b.open {
		b.last = e
		b.probing = false
		b.interval = min(2*b.interval, maxProbeInterval)
		b.nextProbe = now.Add(max(b.interval, e.retryAfter))
		return false
	}
	if b.failures < breakerThreshold {
		return false
	}
	b.open, b.last, b.interval = true, e, firstProbeAfter
	b.nextProbe = now.Add(max(b.interval, e.retryAfter))
	return true
}

// admit decides whether a new judgement may go ahead: always while the
// breaker is closed; while it is open, only as a probe when one is due.
func (b *breaker) admit(now time.Time) (ok, probe bool) {
	if !b.open {
		return true, false
	}
	if b.probing || now.Before(b.nextProbe) {
		return false, false
	}
	b.probing = true
	return true, true
}

// probeEnded lets another probe go once the current one ended without a
// request (it was cancelled, or decided from the cache).
func (b *breaker) probeEnded() { b.probing = false }

// openError is what judgements refused by the open breaker fail with.
func (b *breaker) openError() *Error {
	e := *b.last
	e.Detail = "the judge is failing; not asked again until a probe succeeds. Last failure: " + e.Detail
	e.retryAfter, e.retryNow = 0, false
	return &e
}
