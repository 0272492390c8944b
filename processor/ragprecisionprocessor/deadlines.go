package ragprecisionprocessor

import (
	"sync"
	"time"
)

// deadlines ends held spans at max_wait with one timer for all of them,
// rather than a timer (and a closure) per span. Every span is held for the
// same max_wait from its arrival, so deadlines come in the order spans are
// held: a queue whose head is always the next to expire. A span judged
// before its deadline stays queued until then, as a small struct whose
// contents were let go, and is skipped; concurrent batches may enqueue a
// few milliseconds out of order, which delays an expiry by as much.
type deadlines struct {
	now    func() time.Time
	expire func(*heldSpan)

	mu    sync.Mutex
	queue []*heldSpan
	head  int
	timer *time.Timer
	// armedFor is the deadline the timer is set for; zero when idle.
	armedFor time.Time
	stopped  bool
}

func newDeadlines(now func() time.Time, expire func(*heldSpan)) *deadlines {
	return &deadlines{now: now, expire: expire}
}

// watch ends h at h.deadline unless it has finished by then.
func (d *deadlines) watch(h *heldSpan) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	d.queue = append(d.queue, h)
	if d.armedFor.IsZero() {
		d.armLocked(h.deadline)
	}
}

func (d *deadlines) armLocked(at time.Time) {
	d.armedFor = at
	wait := at.Sub(d.now())
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.sweep)
		return
	}
	d.timer.Reset(wait)
}

// sweep expires every span whose deadline has come, and sets the timer for
// the next.
func (d *deadlines) sweep() {
	now := d.now()
	var due []*heldSpan
	d.mu.Lock()
	for d.head < len(d.queue) && !d.queue[d.head].deadline.After(now) {
		due = append(due, d.queue[d.head])
		d.queue[d.head] = nil
		d.head++
	}
	if d.head > 1024 && d.head*2 > len(d.queue) {
		d.queue = append(d.queue[:0], d.queue[d.head:]...)
		d.head = 0
	}
	d.armedFor = time.Time{}
	if d.head < len(d.queue) && !d.stopped {
		d.armLocked(d.queue[d.head].deadline)
	}
	d.mu.Unlock()
	for _, h := range due {
		d.expire(h)
	}
}

// stop ends the sweeping: at shutdown every held span is ended anyway.
func (d *deadlines) stop() {
	d.mu.Lock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.queue, d.head = nil, 0
	d.mu.Unlock()
}
