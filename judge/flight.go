package judge

import (
	"context"
	"time"
)

// flight is one cache key being decided: one chunk, or a whole retrieval
// for judges that see the chunks together. It exists while a request for it
// is in flight or waits to be retried; every judgement that needs the same
// key meanwhile waits on it, so identical requests are made once.
type flight struct {
	key      cacheKey
	texts    []string
	verdicts []Verdict
	pending  int // positions not decided yet
	failed   bool
	waiters  []waiter
}

// waiter is a judgement waiting for a flight to decide its group g, whose
// chunk indices are idx (idx[i] for the flight's position i).
type waiter struct {
	j   *job
	idx []int
	g   int
}

// unit is one request to make: the positions of a flight it decides (all of
// them, unless a batched reply broke the contract and the retrieval is
// asked chunk by chunk).
type unit struct {
	f         *flight
	pos       []int
	owner     *job // whose deadline orders it, and who pays
	attempts  int  // failed attempts so far
	notBefore time.Time
	// ctx and cancel bound the attempt under way: the latest deadline of
	// the judgements waiting for it, and Close.
	ctx    context.Context
	cancel context.CancelFunc
}

func (u *unit) texts() []string {
	if len(u.pos) == len(u.f.texts) {
		return u.f.texts
	}
	out := make([]string, len(u.pos))
	for i, p := range u.pos {
		out[i] = u.f.texts[p]
	}
	return out
}

func allPositions(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// decideLocked records the verdicts of a successful attempt, and settles
// the flight when every position is decided.
func (e *Engine) decideLocked(u *unit, verdicts []Verdict, now time.Time) {
	f := u.f
	if f.failed {
		return
	}
	for i, p := range u.pos {
		f.verdicts[p] = verdicts[i]
	}
	f.pending -= len(u.pos)
	if f.pending > 0 {
		return
	}
	e.cache.put(f.key, f.verdicts, now)
	if e.flights[f.key] == f {
		delete(e.flights, f.key)
	}
	for _, w := range f.waiters {
		j := w.j
		if j.finished {
			continue
		}
		e.decideGroupLocked(j, w.g, f.verdicts)
		if j.left == 0 {
			e.completeLocked(j)
		}
	}
}

// failFlightLocked ends a flight that cannot be decided: every judgement
// waiting for it fails with err, which they would meet again themselves.
func (e *Engine) failFlightLocked(f *flight, err *Error) {
	if f.failed {
		return
	}
	f.failed = true
	if e.flights[f.key] == f {
		delete(e.flights, f.key)
	}
	for _, w := range f.waiters {
		e.failLocked(w.j, err)
	}
}

// splitLocked replaces u by one unit per position.
func (e *Engine) splitLocked(u *unit, now time.Time) {
	f := u.f
	for _, p := range u.pos {
		e.requeueLocked(&unit{f: f, pos: []int{p}, owner: u.owner}, now)
	}
}

// requeueLocked puts u back in line at once, under a live judgement that
// waits for it; with none left, the flight is given up.
func (e *Engine) requeueLocked(u *unit, now time.Time) {
	u.notBefore = now
	e.placeLocked(u)
}

// placeLocked queues u under its owner, or under another judgement waiting
// for it when the owner has finished.
func (e *Engine) placeLocked(u *unit) {
	owner := u.owner
	if owner.finished {
		owner = e.liveWaiterLocked(u.f)
	}
	if owner == nil {
		e.orphanLocked(u)
		return
	}
	u.owner = owner
	owner.retries = append(owner.retries, u)
	e.queued++
	if owner.pos[readySlot] < 0 {
		e.ready.push(owner)
	}
	e.cond.Signal()
}

// orphanLocked drops a unit nobody waits for any more.
func (e *Engine) orphanLocked(u *unit) {
	f := u.f
	// The positions u was to decide will not be decided: the flight can no
	// longer complete, even if another of its units (after a split) is still
	// in flight. It must not stay where a later identical judgement would
	// attach to it and wait forever.
	if e.flights[f.key] == f {
		delete(e.flights, f.key)
	}
}

// liveWaiterLocked is the unfinished judgement with the earliest deadline
// that waits for f, or nil.
func (e *Engine) liveWaiterLocked(f *flight) *job {
	var best *job
	for _, w := range f.waiters {
		if w.j.finished {
			continue
		}
		if best == nil || w.j.before(best) {
			best = w.j
		}
	}
	return best
}
