package judge

import "container/heap"

// jobHeap is the judgements with units to send.
type jobHeap []*job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(a, b int) bool { return h[a].before(h[b]) }
func (h jobHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].heapIdx, h[b].heapIdx = a, b
}
func (h *jobHeap) Push(x any) {
	j := x.(*job)
	j.heapIdx = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.heapIdx = -1
	return j
}
func (h *jobHeap) push(j *job) { heap.Push(h, j) }

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

// parkHeap is the judgements waiting for the budget's refill to pay for
// their requests, earliest first.
type parkHeap []*job

func (h parkHeap) Len() int           { return len(h) }
func (h parkHeap) Less(a, b int) bool { return h[a].notBefore.Before(h[b].notBefore) }
func (h parkHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].parkIdx, h[b].parkIdx = a, b
}
func (h *parkHeap) Push(x any) {
	j := x.(*job)
	j.parkIdx = len(*h)
	*h = append(*h, j)
}
func (h *parkHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.parkIdx = -1
	return j
}
