package judge

import "container/heap"

// jobOrder is an order of judgements, and which of a judgement's heap
// positions (job.pos) a heap in that order keeps.
type jobOrder interface {
	less(a, b *job) bool
	slot() int
}

// The positions of a judgement in the engine's two heaps of judgements.
const (
	readySlot  = iota // Engine.ready
	parkedSlot        // Engine.parked
)

// byDeadline orders judgements with units to send, earliest deadline first.
type byDeadline struct{}

func (byDeadline) less(a, b *job) bool { return a.before(b) }
func (byDeadline) slot() int           { return readySlot }

// byTurn orders judgements waiting for the budget's refill by when it
// will have paid for their requests.
type byTurn struct{}

func (byTurn) less(a, b *job) bool { return a.notBefore.Before(b.notBefore) }
func (byTurn) slot() int           { return parkedSlot }

// jobHeap is a heap of judgements in order O. Each judgement keeps its
// position in it (-1: not in it), so that it can leave from anywhere.
type jobHeap[O jobOrder] []*job

func (h jobHeap[O]) Len() int { return len(h) }
func (h jobHeap[O]) Less(a, b int) bool {
	var o O
	return o.less(h[a], h[b])
}
func (h jobHeap[O]) Swap(a, b int) {
	var o O
	h[a], h[b] = h[b], h[a]
	h[a].pos[o.slot()], h[b].pos[o.slot()] = a, b
}
func (h *jobHeap[O]) Push(x any) {
	var o O
	j := x.(*job)
	j.pos[o.slot()] = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap[O]) Pop() any {
	var o O
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.pos[o.slot()] = -1
	return j
}
func (h *jobHeap[O]) push(j *job) { heap.Push(h, j) }

// remove takes j out of the heap, if it is in it, and reports whether it
// was.
func (h *jobHeap[O]) remove(j *job) bool {
	var o O
	if i := j.pos[o.slot()]; i >= 0 {
		heap.Remove(h, i)
		return true
	}
	return false
}

// unitHeap is the units waiting out a backoff. Unlike jobHeap it keeps no
// index in its elements: a unit leaves it only by Pop, once its backoff is
// over.
type unitHeap []*unit

func (h unitHeap) Len() int           { return len(h) }
func (h unitHeap) Less(a, b int) bool { return h[a].notBefore.Before(h[b].notBefore) }
func (h unitHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *unitHeap) Push(x any)        { *h = append(*h, x.(*unit)) }
func (h *unitHeap) Pop() any {
	old := *h
	u := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return u
}
