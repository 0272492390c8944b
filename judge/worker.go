package judge

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// worker sends requests until the engine closes.
func (e *Engine) worker() {
	defer e.workers.Done()
	for {
		u, query, ref := e.take()
		e.drain()
		if u == nil {
			return
		}
		e.run(u, query, ref)
		e.drain()
	}
}

// take waits for the next unit to send: from the judgement with the
// earliest deadline. It fails judgements that can no longer finish in time
// instead of sending their requests, and settles groups that another
// judgement has decided, or is deciding, meanwhile.
func (e *Engine) take() (u *unit, query, ref string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for !e.closed {
		now := e.clock.Now()
		e.promoteLocked(now)
		for len(e.ready) > 0 {
			j := e.ready[0]
			if err := e.lateLocked(j, now); err != nil {
				e.failLocked(j, err)
				continue
			}
			u := e.nextUnitLocked(j, now)
			if j.runnable() == 0 {
				e.ready.remove(j)
			}
			if u == nil {
				continue
			}
			j.started = true
			// Each attempt's context derives from Background, not from a
			// shared parent: deriving thousands from one cancellable parent
			// serialises them on its lock. Close cancels them one by one.
			if deadline := e.unitDeadlineLocked(u); !deadline.IsZero() {
				u.ctx, u.cancel = context.WithTimeout(context.Background(), deadline.Sub(now))
			} else {
				u.ctx, u.cancel = context.WithCancel(context.Background())
			}
			e.running[u] = struct{}{}
			return u, u.owner.query, u.owner.ref
		}
		if len(e.done) > 0 || len(e.notes) > 0 {
			// Judgements ended above (late, or decided meanwhile) are
			// reported now, not when the next event wakes a worker.
			e.mu.Unlock()
			e.drain()
			e.mu.Lock()
			continue
		}
		e.armWakeLocked(now)
		e.cond.Wait()
	}
	return nil, "", ""
}

// nextUnitLocked takes j's next send: a retry, or its next todo group, for
// which it makes the flight and the unit, unless the cache or a flight
// already under way answers the group (nil then).
func (e *Engine) nextUnitLocked(j *job, now time.Time) *unit {
	if len(j.retries) > 0 {
		u := j.retries[0]
		j.retries[0] = nil
		j.retries = j.retries[1:]
		e.queued--
		return u
	}
	for j.next < len(j.gstate) && j.gstate[j.next] != groupTodo {
		j.next++
	}
	if j.next == len(j.gstate) {
		return nil
	}
	g := j.next
	j.next++
	e.queued--
	k := j.keys[g]
	texts, idx := j.groupOf(g, e.perChunk)
	if vs, ok := e.cachedLocked(j, k, now); ok && len(vs) == len(idx) {
		e.unreserveGroupLocked(j, g)
		e.noteLookups(j, len(idx), 0)
		e.decideGroupLocked(j, g, vs)
		if j.left == 0 {
			e.completeLocked(j)
		}
		return nil
	}
	if f, ok := e.flights[k]; ok {
		e.unreserveGroupLocked(j, g)
		e.noteLookups(j, len(idx), 0)
		e.attachLocked(j, g, f)
		return nil
	}
	e.spendGroupLocked(j, g)
	e.noteLookups(j, 0, len(idx))
	f := &flight{key: k, texts: texts, verdicts: make([]Verdict, len(texts)), pending: len(texts),
		waiters: []waiter{{j: j, idx: idx, g: g}}}
	e.flights[k] = f
	j.todo--
	j.gstate[g] = groupWaiting
	return &unit{f: f, pos: allPositions(len(texts)), owner: j}
}

// lateLocked tells whether judgement j can no longer finish in time at the
// judge's current latency: ErrDeadline once its deadline has passed or is
// closer than one request; ErrNoCapacity when it has not started and its
// requests need more rounds of the slots than it has time for.
func (e *Engine) lateLocked(j *job, now time.Time) error {
	if j.deadline.IsZero() {
		return nil
	}
	if !now.Before(j.deadline) {
		return ErrDeadline
	}
	mean := e.latency.mean
	if mean == 0 {
		return nil
	}
	if j.started {
		if now.Add(mean).After(j.deadline) {
			return ErrDeadline
		}
		return nil
	}
	if e.overrunsLocked(j.runnable(), now, j.deadline) {
		return ErrNoCapacity
	}
	return nil
}

// overrunsLocked reports whether n requests, sent e.slots at a time at the
// judge's current mean latency, would end after deadline.
func (e *Engine) overrunsLocked(n int, now, deadline time.Time) bool {
	rounds := math.Ceil(float64(n) / float64(e.slots))
	return now.Add(time.Duration(rounds * float64(e.latency.mean))).After(deadline)
}

// unitDeadlineLocked is the latest deadline of the judgements waiting for
// u: the request is worth finishing until then. Zero: no deadline.
func (e *Engine) unitDeadlineLocked(u *unit) time.Time {
	var latest time.Time
	for _, w := range u.f.waiters {
		if w.j.finished {
			continue
		}
		if w.j.deadline.IsZero() {
			return time.Time{}
		}
		if w.j.deadline.After(latest) {
			latest = w.j.deadline
		}
	}
	return latest
}

// run makes one attempt at u and settles what came of it.
func (e *Engine) run(u *unit, query, ref string) {
	start := e.clock.Now()
	verdicts, usage, err := e.be.Attempt(u.ctx, query, ref, u.texts())
	latency := e.clock.Now().Sub(start)
	u.cancel()
	u.ctx = nil
	e.mu.Lock()
	e.settleLocked(u, verdicts, usage, err, latency)
	e.mu.Unlock()
}

// settleLocked applies the outcome of one attempt.
func (e *Engine) settleLocked(u *unit, verdicts []Verdict, usage Usage, err error, latency time.Duration) {
	delete(e.running, u)
	now := e.clock.Now()
	f := u.f
	payer := u.owner
	if payer.finished {
		if w := e.liveWaiterLocked(f); w != nil {
			payer = w
		}
	}
	payer.usage.Add(usage)

	var caller *callerError
	var jerr *Error
	switch {
	case err == nil:
		e.note(func() { e.obs.JudgeRequest(payer.purpose, OutcomeOK, "", latency, usage) })
		e.latency.add(latency)
		if e.health.success() {
			e.note(func() { e.obs.JudgeHealth(nil) })
		}
		e.decideLocked(u, verdicts, now)
		e.shedLocked(now)
	case errors.As(err, &caller):
		if caller.sent {
			e.note(func() { e.obs.JudgeRequest(payer.purpose, OutcomeCancelled, "", latency, usage) })
		}
		if payer.probe {
			e.health.probeEnded()
		}
		if e.closed {
			return
		}
		// The deadline of every judgement that wanted it passed (they are
		// failed by their owners' timers, or here), or it was cancelled.
		for _, w := range f.waiters {
			if !w.j.finished && !w.j.deadline.IsZero() && !now.Before(w.j.deadline) {
				e.failLocked(w.j, ErrDeadline)
			}
		}
		e.requeueLocked(u, now)
	case errors.As(err, &jerr):
		e.failedAttemptLocked(u, jerr, latency, usage, now)
	default:
		e.failedAttemptLocked(u, NewError(ReasonUnreachable, 0, err.Error()), latency, usage, now)
	}
}

// failedAttemptLocked decides what follows a failed attempt: another one
// after a backoff, the retrieval asked chunk by chunk, or the end of every
// judgement waiting for it.
func (e *Engine) failedAttemptLocked(u *unit, jerr *Error, latency time.Duration, usage Usage, now time.Time) {
	purpose := u.owner.purpose
	if jerr.retryNow {
		// The request was changed to what the endpoint accepts: ask again
		// at once.
		if jerr.sent {
			e.note(func() { e.obs.JudgeRequest(purpose, OutcomeRetry, jerr.Reason, latency, usage) })
		}
		e.requeueLocked(u, now)
		return
	}
	if !jerr.sent {
		// Refused before it was sent: no judge request happened, and the
		// same request would be refused again.
		e.failFlightLocked(u.f, jerr)
		return
	}
	// The canary's failures say nothing about the spans' judge that the
	// spans' own would not: only its probes count, so that labelled
	// retrievals a judge cannot handle never open the breaker on traffic.
	if (purpose != PurposeCanary || u.owner.probe) && e.health.failure(jerr, now) {
		opened := *jerr
		e.note(func() { e.obs.JudgeHealth(&opened) })
		// Everything queued would meet the same outage: fail it now, as the
		// outage it is.
		oe := e.health.openError()
		for j := range e.live {
			if !j.probe {
				e.failLocked(j, oe)
			}
		}
	}
	deadline := e.unitDeadlineLocked(u)
	if jerr.retryable() && u.attempts < e.maxRetries && !e.closed && e.liveWaiterLocked(u.f) != nil {
		delay := e.backoff(u.attempts)
		if jerr.retryAfter > 0 {
			delay = min(jerr.retryAfter, maxRetryAfter)
		}
		switch {
		case !deadline.IsZero() && now.Add(delay+e.latency.mean).After(deadline):
			// Waiting would outlast every judgement that needs it: give up
			// now rather than hold them until they time out.
			late := *jerr
			late.Detail = fmt.Sprintf("%s (next attempt due in %s, after the deadline)", jerr.Detail, delay.Round(time.Millisecond))
			jerr = &late
		case e.health.open && !u.owner.probe:
			jerr = e.health.openError()
		default:
			e.note(func() { e.obs.JudgeRequest(purpose, OutcomeRetry, jerr.Reason, latency, usage) })
			u.attempts++
			u.notBefore = now.Add(delay)
			heap.Push(&e.delayed, u)
			e.queued++
			e.armWakeLocked(now)
			return
		}
	}
	if jerr.Reason == ReasonBadReply && len(u.pos) > 1 && !e.closed && e.liveWaiterLocked(u.f) != nil {
		// The model does not keep to the batched contract for these chunks
		// (miscounted, or malformed) even when asked again: ask chunk by
		// chunk instead of failing the retrieval.
		e.note(func() { e.obs.JudgeRequest(purpose, OutcomeRetry, jerr.Reason, latency, usage) })
		e.splitLocked(u, now)
		return
	}
	e.note(func() { e.obs.JudgeRequest(purpose, OutcomeError, jerr.Reason, latency, usage) })
	e.failFlightLocked(u.f, jerr)
}

// Backoff between attempts: exponential from initialBackoff, capped at
// maxBackoff, with "equal jitter" (a random point in the upper half) so
// that replicas hit by the same outage do not retry in lockstep. A server's
// Retry-After replaces the computed delay, up to maxRetryAfter.
const (
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 20 * time.Second
	maxRetryAfter  = 60 * time.Second
)

// MinRetryBackoff is the shortest wait before a retry: the initial backoff
// with the least jitter. Configuration checks that a judgement's wait
// leaves room for it.
const MinRetryBackoff = initialBackoff / 2

func (e *Engine) backoff(attempt int) time.Duration {
	d := initialBackoff << min(attempt, 16)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	half := d / 2
	return half + time.Duration(e.jitter()*float64(half))
}

// promoteLocked moves units whose backoff is over, and jobs the budget has
// paid for, in line.
func (e *Engine) promoteLocked(now time.Time) {
	for len(e.delayed) > 0 && !e.delayed[0].notBefore.After(now) {
		u := heap.Pop(&e.delayed).(*unit)
		e.queued--
		e.placeLocked(u)
	}
	for len(e.parked) > 0 && !e.parked[0].notBefore.After(now) {
		j := heap.Pop(&e.parked).(*job)
		e.queued += j.todo
		e.ready.push(j)
	}
}

// armWakeLocked makes sure a worker wakes when the earliest backoff or
// budget wait ends.
func (e *Engine) armWakeLocked(now time.Time) {
	if (len(e.delayed) == 0 && len(e.parked) == 0) || e.closed {
		return
	}
	var at time.Time
	if len(e.delayed) > 0 {
		at = e.delayed[0].notBefore
	}
	if len(e.parked) > 0 && (at.IsZero() || e.parked[0].notBefore.Before(at)) {
		at = e.parked[0].notBefore
	}
	if e.wake != nil && !at.Before(e.wakeAt) {
		return
	}
	if e.wake != nil {
		e.wake.Stop()
	}
	e.wakeAt = at
	e.wake = e.clock.AfterFunc(at.Sub(now), func() {
		e.mu.Lock()
		if e.wakeAt.Equal(at) {
			e.wake = nil
		}
		e.cond.Broadcast()
		e.mu.Unlock()
	})
}

// shedInterval bounds how often queued work is checked against deadlines.
const shedInterval = 100 * time.Millisecond

// shedLocked fails, earliest deadline first, the judgements that have not
// started and cannot finish in time behind the work ahead of them, once the
// judge's latency is known: after a burst admitted before any request had
// finished, they are forwarded at once instead of at their deadline.
func (e *Engine) shedLocked(now time.Time) {
	if e.latency.mean == 0 || len(e.ready) == 0 || now.Sub(e.shedAt) < shedInterval {
		return
	}
	e.shedAt = now
	jobs := slices.Clone([]*job(e.ready))
	slices.SortFunc(jobs, func(a, b *job) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	ahead := len(e.running) + len(e.delayed)
	for _, j := range jobs {
		units := j.runnable()
		if j.started || j.deadline.IsZero() || j.probe {
			ahead += units
			continue
		}
		if e.overrunsLocked(ahead+units, now, j.deadline) {
			e.failLocked(j, ErrNoCapacity)
			continue
		}
		ahead += units
	}
}
