package judge

import (
	"strings"
	"time"
)

// job is one retrieval to judge. While it waits for a worker it is only
// this struct and its arrays: requests (units) and the records that
// de-duplicate them (flights) are made when a worker takes its next group.
type job struct {
	seq        uint64
	query, ref string
	verdicts   []Verdict
	// texts are the chunks to judge (not empty, cut to maxChunkChars),
	// idx their indices in verdicts, keys the cache keys of their groups:
	// group g is texts[g] for a per-chunk backend, all of texts (g = 0)
	// for backends that see the chunks together.
	texts []string
	idx   []int
	keys  []cacheKey
	// gstate is each group's state: groupTodo until a worker takes it.
	gstate []uint8
	next   int // first group that may still be todo
	todo   int // groups in groupTodo
	// retries are units of this job ready to be sent again.
	retries []*unit

	left     int // chunks not decided yet
	usage    Usage
	deadline time.Time // zero: none
	done     func(Result, error)
	finished bool
	probe    bool
	started  bool
	// pos is the job's position in the engine's ready and parked heaps
	// (-1: not in it).
	pos [2]int
	// notBefore is when the budget has paid for the job's requests (zero:
	// at Admit); until then it is parked.
	notBefore time.Time
	// reservedFor marks the groups for which Admit reserved a budget token
	// (1) that has been neither spent on a request nor given back: only
	// those give a token back when another request answers them.
	reservedFor []uint8
	// hits counts the chunks answered before Commit without a request of
	// their own (from the cache, or by a flight), for the observer.
	hits int
	// purpose is what the requests it pays for are for; fresh, that the
	// cache is not read for it.
	purpose Purpose
	fresh   bool
}

// Group states.
const (
	groupTodo    uint8 = iota // not taken yet
	groupWaiting              // a request for it is in flight (this job's or another's)
	groupDone                 // decided
)

// groupOf returns group g's texts and chunk indices.
func (j *job) groupOf(g int, perChunk bool) ([]string, []int) {
	if perChunk {
		return j.texts[g : g+1], j.idx[g : g+1]
	}
	return j.texts, j.idx
}

// runnable is the number of sends the job has ready: todo groups and
// retries.
func (j *job) runnable() int { return j.todo + len(j.retries) }

// before orders judgements earliest deadline first (none last), then by
// arrival.
func (j *job) before(o *job) bool {
	switch {
	case j.deadline.IsZero() != o.deadline.IsZero():
		return !j.deadline.IsZero()
	case !j.deadline.Equal(o.deadline):
		return j.deadline.Before(o.deadline)
	}
	return j.seq < o.seq
}

// isBlank reports whether a chunk has no text: it keeps its rank and is not
// relevant, decided without the judge, since a request would only pay to be
// told so. Every path to the judge decides blank chunks this way.
func isBlank(chunk string) bool { return strings.TrimSpace(chunk) == "" }

// EmptyChunkReason is the reason of a chunk with no text, which is decided
// not relevant without asking the judge.
const EmptyChunkReason = "empty chunk: no text to judge"

// prepare cuts the texts to maxChunkChars, decides empty chunks (and, in a
// cascade, what the first stage is sure of), and computes the groups'
// cache keys.
func (e *Engine) prepare(req Request) *job {
	query, ref := TruncateRunes(req.Query, e.maxChunkChars), TruncateRunes(req.Reference, e.maxChunkChars)
	j := &job{query: query, ref: ref, verdicts: make([]Verdict, len(req.Chunks)), pos: [2]int{-1, -1}, purpose: req.Purpose, fresh: req.Fresh}
	if j.purpose == "" {
		j.purpose = PurposeTraffic
	}
	n := 0
	for _, c := range req.Chunks {
		if !isBlank(c) {
			n++
		}
	}
	j.texts, j.idx = make([]string, 0, n), make([]int, 0, n)
	for i, c := range req.Chunks {
		if isBlank(c) {
			j.verdicts[i] = Verdict{Relevant: false, Reason: EmptyChunkReason}
			continue
		}
		j.texts = append(j.texts, TruncateRunes(c, e.maxChunkChars))
		j.idx = append(j.idx, i)
	}
	if e.cascade != nil && n > 0 {
		n = e.cascade.firstStage(j)
	}
	j.left = n
	if n == 0 {
		return j
	}
	if e.perChunk {
		j.keys = make([]cacheKey, n)
		for k := range j.texts {
			j.keys[k] = e.keys.key(query, ref, j.texts[k:k+1])
		}
	} else {
		j.keys = []cacheKey{e.keys.key(query, ref, j.texts)}
	}
	// One allocation for the groups' states and their budget reservations.
	buf := make([]uint8, 2*len(j.keys))
	j.gstate, j.reservedFor = buf[:len(j.keys):len(j.keys)], buf[len(j.keys):]
	j.todo = len(j.keys)
	return j
}

// decideGroupLocked records group g's verdicts on j.
func (e *Engine) decideGroupLocked(j *job, g int, vs []Verdict) {
	_, idx := j.groupOf(g, e.perChunk)
	for i, ci := range idx {
		j.verdicts[ci] = vs[i]
	}
	j.left -= len(idx)
	if j.gstate[g] == groupTodo {
		j.todo--
	}
	j.gstate[g] = groupDone
}

// cachedLocked is what the cache holds for key k, unless j asks the judge
// itself.
func (e *Engine) cachedLocked(j *job, k cacheKey, now time.Time) ([]Verdict, bool) {
	if j.fresh {
		return nil, false
	}
	return e.cache.get(k, now)
}

// fromCache decides the todo groups the cache holds. e.mu is held, or j is
// not shared yet.
func (e *Engine) fromCache(j *job, now time.Time) {
	if j.fresh {
		return
	}
	for g, k := range j.keys {
		if j.gstate[g] != groupTodo {
			continue
		}
		if vs, ok := e.cache.get(k, now); ok {
			_, idx := j.groupOf(g, e.perChunk)
			if len(vs) != len(idx) {
				continue
			}
			j.hits += len(idx)
			e.decideGroupLocked(j, g, vs)
		}
	}
}

// failLocked ends judgement j with err unless it has finished.
func (e *Engine) failLocked(j *job, err error) {
	if j.finished {
		return
	}
	j.finished = true
	e.releaseLocked(j)
	if j.done != nil {
		e.done = append(e.done, completion{j: j, res: Result{Usage: j.usage}, err: err})
	}
}

// completeLocked ends judgement j with its verdicts.
func (e *Engine) completeLocked(j *job) {
	j.finished = true
	e.releaseLocked(j)
	if j.done != nil {
		e.done = append(e.done, completion{j: j, res: Result{Verdicts: j.verdicts, Usage: j.usage}})
	}
}

// releaseLocked takes a finished judgement out of the schedule: its todo
// groups are dropped, its retries go to another judgement waiting for them
// (or are dropped), its unspent budget is given back.
func (e *Engine) releaseLocked(j *job) {
	delete(e.live, j)
	e.ready.remove(j)
	if e.parked.remove(j) {
		e.queued += j.todo // not counted while parked
	}
	e.queued -= j.todo
	j.todo = 0
	units := j.retries
	j.retries = nil
	e.queued -= len(units)
	for _, u := range units {
		e.placeLocked(u) // j has finished: under another waiter, or dropped
	}
	e.unreserveAllLocked(j)
	if j.probe {
		e.health.probeEnded()
	}
}
