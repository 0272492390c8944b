package judge

import "time"

// Ticket is an admitted judgement: what it needs is reserved (budget, a
// place in the schedule), but nothing is sent until Commit. The processor
// admits a span while it is still in its batch, so that a refusal lets the
// span go on with the batch and a status, and commits it once the batch has
// been accepted downstream.
type Ticket struct {
	e     *Engine
	j     *job
	state int // ticketAdmitted, ticketCommitted, ticketAbandoned
	// cancelled is the error given to Cancel before Commit: Commit then
	// ends the judgement with it at once.
	cancelled error
}

const (
	ticketAdmitted = iota
	ticketCommitted
	ticketAbandoned
)

// Admit checks that req can be judged within the given time (0: no
// deadline) and reserves what that takes. It fails at once with
// ErrOverBudget, ErrNoCapacity, ErrClosed, or the judge's failure (an
// *Error) when the health breaker is open.
func (e *Engine) Admit(req Request, within time.Duration) (*Ticket, error) {
	j := e.prepare(req)
	now := e.clock.Now()
	if within > 0 {
		j.deadline = now.Add(within)
	}
	e.fromCache(j, now)

	e.mu.Lock()
	t, err := e.admitLocked(j, now)
	e.mu.Unlock()
	e.drain()
	return t, err
}

func (e *Engine) admitLocked(j *job, now time.Time) (*Ticket, error) {
	if e.closed {
		return nil, ErrClosed
	}
	// Requests this judgement would make: one per distinct key not already
	// being decided for another judgement. (A refused judgement is dropped,
	// marks and all.)
	need := 0
	for g, k := range j.keys {
		if j.gstate[g] != groupTodo {
			continue
		}
		if _, ok := e.flights[k]; ok || (e.perChunk && duplicateKey(j.keys[:g], k)) {
			continue
		}
		j.reservedFor[g] = 1
		need++
	}
	if need > 0 {
		ok, probe := e.health.admit(now)
		if !ok {
			return nil, e.health.openError()
		}
		j.probe = probe
		if err := e.capacityLocked(j, need, now); err != nil {
			if probe {
				e.health.probeEnded()
			}
			return nil, err
		}
		if e.budget != nil {
			wait, ok := e.budget.reserve(need, e.budgetWaitLocked(j, now))
			if !ok {
				if probe {
					e.health.probeEnded()
				}
				return nil, ErrOverBudget
			}
			if wait > 0 {
				j.notBefore = now.Add(wait)
			}
		}
	}
	return &Ticket{e: e, j: j}, nil
}

// budgetWaitLocked is how long judgement j may wait for the budget
// (BudgetWait at the judge's current latency). A judgement without a
// deadline, and the health breaker's probe, do not wait.
func (e *Engine) budgetWaitLocked(j *job, now time.Time) time.Duration {
	if j.deadline.IsZero() || j.probe {
		return 0
	}
	return BudgetWait(j.deadline.Sub(now), e.latency.mean)
}

// BudgetWait is how long a judgement with within left to its deadline may
// wait for the budget's refill, at a request latency of latency: half its
// time, less one request, so that it can still be judged with a retry.
func BudgetWait(within, latency time.Duration) time.Duration {
	return max(0, within/2-latency)
}

func duplicateKey(keys []cacheKey, k cacheKey) bool {
	for _, o := range keys {
		if o == k {
			return true
		}
	}
	return false
}

// capacityLocked refuses a judgement that, behind the requests already
// queued and in flight, would finish after its deadline at the judge's
// current latency.
func (e *Engine) capacityLocked(j *job, need int, now time.Time) error {
	if j.deadline.IsZero() || e.latency.mean == 0 {
		return nil
	}
	if e.overrunsLocked(e.queued+len(e.running)+need, now, j.deadline) {
		return ErrNoCapacity
	}
	return nil
}

// Commit starts the judgement. done is called exactly once, from another
// goroutine or before Commit returns, with one verdict per chunk or an
// error: ErrDeadline, ErrNoCapacity, ErrClosed, the error given to Cancel,
// or an *Error.
func (t *Ticket) Commit(done func(Result, error)) {
	e, j := t.e, t.j
	e.mu.Lock()
	if t.state != ticketAdmitted {
		e.mu.Unlock()
		panic("judge: ticket committed twice or after Abandon")
	}
	t.state = ticketCommitted
	// A judgement that ends here has done called here, not queued on
	// e.done: another goroutine draining meanwhile would call it later, and
	// the caller relies on it being called before Commit returns (Decided).
	if e.closed || t.cancelled != nil {
		err := t.cancelled
		if e.closed {
			err = ErrClosed
		}
		j.todo = 0 // never queued
		e.failLocked(j, err)
		e.mu.Unlock()
		e.drain()
		done(Result{Usage: j.usage}, err)
		return
	}
	e.seq++
	j.seq = e.seq
	e.live[j] = struct{}{}
	// Decided meanwhile by another judgement, or being decided now: wait
	// for that rather than ask again.
	e.fromCache(j, e.clock.Now())
	for g, k := range j.keys {
		if j.gstate[g] == groupTodo {
			if f, ok := e.flights[k]; ok {
				j.hits += e.attachLocked(j, g, f)
			}
		}
	}
	for g := range j.keys {
		if j.gstate[g] != groupTodo {
			e.unreserveGroupLocked(j, g) // answered without a request of its own
		}
	}
	// Groups still todo are reported when a worker looks them up.
	if hits := j.hits; hits > 0 {
		e.noteLookups(j, hits, 0)
	}
	if j.left == 0 {
		e.completeLocked(j)
		e.mu.Unlock()
		e.drain()
		done(Result{Verdicts: j.verdicts, Usage: j.usage}, nil)
		return
	}
	j.done = done
	switch {
	case j.runnable() == 0:
	case j.notBefore.After(e.clock.Now()):
		// Its requests wait for the budget's refill: a worker wakes for
		// them then (armWakeLocked), and counts them as queued.
		e.parked.push(j)
		e.cond.Broadcast()
	default:
		e.queued += j.todo
		e.ready.push(j)
		e.cond.Broadcast()
	}
	e.mu.Unlock()
	e.drain()
}

// attachLocked makes job j wait for flight f to decide its group g, and
// returns the number of chunks in the group.
func (e *Engine) attachLocked(j *job, g int, f *flight) int {
	_, idx := j.groupOf(g, e.perChunk)
	f.waiters = append(f.waiters, waiter{j: j, idx: idx, g: g})
	if j.gstate[g] == groupTodo {
		j.todo--
	}
	j.gstate[g] = groupWaiting
	return len(idx)
}

// Decided reports whether the judgement needs no request: every chunk was
// decided at admission (empty, from the cache, or by a cascade's first
// stage). Commit then calls done before it returns.
func (t *Ticket) Decided() bool { return t.j.left == 0 }

// Abandon gives back what Admit reserved; nothing is judged.
func (t *Ticket) Abandon() {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.state != ticketAdmitted {
		return
	}
	t.state = ticketAbandoned
	e.unreserveAllLocked(t.j)
	if t.j.probe {
		e.health.probeEnded()
	}
}

// Cancel ends a committed judgement with err, unless it has finished
// already; its done is then called with err. Before Commit, it makes Commit
// end the judgement with err at once (a deadline timer may fire between
// the two).
func (t *Ticket) Cancel(err error) {
	e := t.e
	e.mu.Lock()
	switch t.state {
	case ticketCommitted:
		e.failLocked(t.j, err)
	case ticketAdmitted:
		if t.cancelled == nil {
			t.cancelled = err
		}
	}
	e.mu.Unlock()
	e.drain()
}

// unreserveAllLocked gives back the budget reserved for j's groups that
// will not be sent.
func (e *Engine) unreserveAllLocked(j *job) {
	n := 0
	for g, r := range j.reservedFor {
		n += int(r)
		j.reservedFor[g] = 0
	}
	e.refundLocked(n)
}

// unreserveGroupLocked gives back the token reserved for j's group g, if it
// has one: the group was answered without a request of its own.
func (e *Engine) unreserveGroupLocked(j *job, g int) {
	if j.reservedFor[g] == 0 {
		return
	}
	j.reservedFor[g] = 0
	e.refundLocked(1)
}

// spendGroupLocked pays for the request about to be sent for j's group g:
// with the token reserved for it, or, for a group that needed none at
// Admit (its key was in flight then, or came earlier in the retrieval, and
// that request has ended since), with one taken now, in debt if need be.
// Retries are not paid for: the budget bounds the judgements admitted, and
// an outage must not read as an exhausted budget.
func (e *Engine) spendGroupLocked(j *job, g int) {
	if j.reservedFor[g] != 0 {
		j.reservedFor[g] = 0
		return
	}
	if e.budget != nil {
		e.budget.spend(1)
	}
}

func (e *Engine) refundLocked(n int) {
	if e.budget != nil && n > 0 {
		e.budget.refund(n)
	}
}
