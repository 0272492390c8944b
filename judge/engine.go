package judge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Engine judges retrievals: one Backend behind the verdict cache, in-flight
// de-duplication, a bounded scheduler of requests with retries, a budget,
// and a health breaker. Judgements are scheduled earliest deadline first, a
// whole retrieval at a time, so that under a burst they finish one after
// another instead of none finishing; one that cannot finish in time at the
// current latency is refused (ErrNoCapacity) rather than paid for.
type Engine struct {
	be            Backend
	ident         string
	perChunk      bool     // each chunk is its own group (see job)
	cascade       *Cascade // nil: none
	keys          keyer
	cache         *verdictCache
	clock         Clock
	obs           Observer
	jitter        func() float64
	budget        *budget // nil: no budget
	maxRetries    int
	maxChunkChars int
	slots         int

	mu      sync.Mutex
	cond    *sync.Cond
	closed  bool
	seq     uint64
	ready   jobHeap[byDeadline] // jobs with units to send
	delayed unitHeap            // units waiting out a backoff, earliest first
	parked  jobHeap[byTurn]     // jobs waiting for the budget's refill
	flights map[cacheKey]*flight
	live    map[*job]struct{}
	running map[*unit]struct{}
	queued  int // groups todo, retries ready or delayed
	wake    Timer
	wakeAt  time.Time
	latency latencyEstimate
	health  breaker
	shedAt  time.Time
	// done holds finished judgements whose callbacks are due; they are
	// called by whoever drains it, outside the lock.
	done    []completion
	notes   []func()
	workers sync.WaitGroup
}

// Settings are the engine's limits, the same for every backend.
type Settings struct {
	// MaxConcurrency bounds the requests in flight: it is the number of
	// workers that send them.
	MaxConcurrency int
	// MaxRequestsPerSecond is the request budget; 0 means no budget.
	// Retries are not charged to it.
	MaxRequestsPerSecond float64
	// MaxRetries is how many times a failed request is tried again.
	MaxRetries int
	// MaxChunkChars cuts the query, the reference and each chunk to that
	// many characters before any backend or cache key sees them.
	MaxChunkChars int
	// CacheSize is the verdict cache's capacity in verdicts; 0 disables it.
	CacheSize int
	// CacheTTL is how long a cached verdict is served; 0 means until evicted.
	CacheTTL time.Duration
	// Cascade, when set, lets a first stage decide the verdicts it is sure
	// of before the backend is asked about the rest.
	Cascade *Cascade
}

func (s Settings) check() error {
	switch {
	case s.MaxConcurrency < 1:
		return fmt.Errorf("judge: at least one request must be allowed in flight, got %d", s.MaxConcurrency)
	case !(s.MaxRequestsPerSecond >= 0): // also catches NaN
		return fmt.Errorf("judge: the request budget must be 0 (none) or positive, got %v", s.MaxRequestsPerSecond)
	case s.MaxRetries < 0:
		return fmt.Errorf("judge: the number of retries must not be negative, got %d", s.MaxRetries)
	case s.MaxChunkChars < 1:
		return fmt.Errorf("judge: texts must be cut to at least 1 character, got %d", s.MaxChunkChars)
	case s.CacheSize < 0 || s.CacheTTL < 0:
		return fmt.Errorf("judge: the cache's size and expiry must not be negative, got %d and %s", s.CacheSize, s.CacheTTL)
	case s.Cascade != nil && (s.Cascade.First == nil || !s.Cascade.First.Inline()):
		return errors.New("judge: a cascade's first stage must be an inline backend")
	case s.Cascade != nil && !(s.Cascade.MinConfidence >= 0 && s.Cascade.MinConfidence <= 1):
		return fmt.Errorf("judge: a cascade's confidence must be within [0, 1], got %v", s.Cascade.MinConfidence)
	}
	return nil
}

// Option adjusts New; tests use them to inject time and randomness.
type Option func(*options)

type options struct {
	clock    Clock
	observer Observer
	jitter   func() float64
}

// WithClock replaces the wall clock used for backoff, budgets, the health
// breaker, latency estimates and cache expiry.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithObserver receives request, cache and health events.
func WithObserver(obs Observer) Option { return func(o *options) { o.observer = obs } }

// WithJitter replaces the source of backoff jitter, a function returning
// values in [0, 1).
func WithJitter(f func() float64) Option { return func(o *options) { o.jitter = f } }

// New runs backend be under the scheduling, caching and budget s describes.
// The engine owns be from then on: Close closes it. Settings it cannot
// honour are refused; the configuration has told the user about them first.
func New(be Backend, s Settings, opts ...Option) (*Engine, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	o := options{clock: realClock{}, observer: nopObserver{}, jitter: rand.Float64}
	for _, opt := range opts {
		opt(&o)
	}
	e := &Engine{
		be:            be,
		perChunk:      be.PerChunk(),
		ident:         be.ID(),
		cascade:       s.Cascade,
		keys:          keyer{salt: []byte(be.CacheSalt())},
		cache:         newVerdictCache(cacheSizeFor(be, s.CacheSize), s.CacheTTL),
		clock:         o.clock,
		obs:           o.observer,
		jitter:        o.jitter,
		maxRetries:    s.MaxRetries,
		maxChunkChars: s.MaxChunkChars,
		slots:         s.MaxConcurrency,
		flights:       make(map[cacheKey]*flight),
		live:          make(map[*job]struct{}),
		running:       make(map[*unit]struct{}),
	}
	if s.Cascade != nil {
		e.ident = CascadePrefix + be.ID()
	}
	e.cond = sync.NewCond(&e.mu)
	e.latency.warmup = e.slots
	if s.MaxRequestsPerSecond > 0 && !be.Inline() {
		e.budget = newBudget(s.MaxRequestsPerSecond, o.clock)
	}
	e.workers.Add(e.slots)
	for range e.slots {
		go e.worker()
	}
	return e, nil
}

// ID is the judge's "provider:model", as recorded on scored spans
// ("cascade:provider:model" for a cascade).
func (e *Engine) ID() string { return e.ident }

// Inline reports whether the judge is cheap and local enough (builtin:lexical)
// to be called in the caller's goroutine with JudgeInline.
func (e *Engine) Inline() bool { return e.be.Inline() }

// cacheSizeFor is the verdict cache's size for backend be: none for an
// inline judge, which judges a retrieval again for less than keeping its
// verdicts costs (a hash of the whole retrieval, an LRU entry, reasons kept
// live for the garbage collector to mark; docs/BENCHMARKS.md). A cascade's
// LLM stage keeps its cache.
func cacheSizeFor(be Backend, size int) int {
	if be.Inline() {
		return 0
	}
	return size
}

// noteLookups reports j's chunks looked up in the cache (or found in
// flight) to the observer. An inline judge has no cache and reports none,
// nor does a judgement that does not read it (Request.Fresh).
func (e *Engine) noteLookups(j *job, hits, misses int) {
	if e.be.Inline() || j.fresh {
		return
	}
	e.note(func() { e.obs.CacheLookups(hits, misses) })
}

// JudgeInline judges req in the caller's goroutine. It is for inline judges
// (see Inline); others return an error. Inline judges are not cached (see
// cacheSizeFor), so it is the judge and nothing else: no job, no keys.
func (e *Engine) JudgeInline(req Request) (Result, error) {
	if !e.be.Inline() {
		return Result{}, errors.New("judge " + e.be.ID() + " cannot judge inline")
	}
	query, ref := TruncateRunes(req.Query, e.maxChunkChars), TruncateRunes(req.Reference, e.maxChunkChars)
	// The chunks go to the judge as they are unless one is empty (decided
	// here) or longer than the cut: only then is a list made.
	texts, idx := req.Chunks, []int(nil)
	for i, c := range req.Chunks {
		cut := TruncateRunes(c, e.maxChunkChars)
		blank := isBlank(c)
		if idx == nil && (blank || len(cut) != len(c)) {
			texts, idx = make([]string, i, len(req.Chunks)), make([]int, i, len(req.Chunks))
			copy(texts, req.Chunks[:i])
			for k := range idx {
				idx[k] = k
			}
		}
		if idx != nil && !blank {
			texts, idx = append(texts, cut), append(idx, i)
		}
	}
	var vs []Verdict
	var usage Usage
	if len(texts) > 0 {
		var err error
		if vs, usage, err = e.be.Attempt(context.Background(), query, ref, texts); err != nil {
			return Result{}, err
		}
		if len(vs) != len(texts) {
			return Result{Usage: usage}, BadReply(errors.New("a verdict count unlike the chunk count"))
		}
	}
	if idx == nil {
		return Result{Verdicts: vs, Usage: usage}, nil
	}
	verdicts := make([]Verdict, len(req.Chunks))
	for i := range verdicts {
		verdicts[i] = Verdict{Relevant: false, Reason: EmptyChunkReason}
	}
	for k, i := range idx {
		verdicts[i] = vs[k]
	}
	return Result{Verdicts: verdicts, Usage: usage}, nil
}

// Judge judges req and waits for the verdicts, until ctx ends. A deadline
// on ctx is the judgement's deadline, which the scheduler plans with.
func (e *Engine) Judge(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if e.be.Inline() {
		return e.JudgeInline(req)
	}
	var within time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if within = time.Until(dl); within <= 0 {
			return Result{}, context.DeadlineExceeded
		}
	}
	t, err := e.Admit(req, within)
	if err != nil {
		return Result{}, err
	}
	type outcome struct {
		res Result
		err error
	}
	ch := make(chan outcome, 1)
	t.Commit(func(res Result, err error) { ch <- outcome{res, err} })
	select {
	case o := <-ch:
		if errors.Is(o.err, ErrDeadline) {
			// The judgement's deadline is ctx's: the scheduler may reach it
			// a moment before ctx reports it, or give up as it comes near.
			return Result{Usage: o.res.Usage}, context.DeadlineExceeded
		}
		return o.res, o.err
	case <-ctx.Done():
		t.Cancel(ctx.Err())
		o := <-ch
		if o.err == nil {
			return o.res, nil // finished just before
		}
		return Result{Usage: o.res.Usage}, ctx.Err()
	}
}

// Close ends every judgement not finished (ErrClosed), cancels the requests
// in flight, stops the workers and closes the backend.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for j := range e.live {
		e.failLocked(j, ErrClosed)
	}
	for u := range e.running {
		if u.cancel != nil {
			u.cancel()
		}
	}
	if e.wake != nil {
		e.wake.Stop()
		e.wake = nil
	}
	e.cond.Broadcast()
	e.mu.Unlock()
	e.drain()
	e.workers.Wait()
	e.be.Close()
	if e.cascade != nil {
		e.cascade.First.Close()
	}
	return nil
}

// completion is a finished judgement whose callback is due.
type completion struct {
	j   *job
	res Result
	err error
}

// drain calls the callbacks of finished judgements and the observer calls
// noted under the lock, outside it: callbacks forward spans and report
// status, which must not happen under the scheduler's lock.
func (e *Engine) drain() {
	for {
		e.mu.Lock()
		done, notes := e.done, e.notes
		e.done, e.notes = nil, nil
		e.mu.Unlock()
		if len(done) == 0 && len(notes) == 0 {
			return
		}
		for _, n := range notes {
			n()
		}
		for _, c := range done {
			c.j.done(c.res, c.err)
		}
	}
}

// note defers an observer call until the lock is released.
func (e *Engine) note(f func()) { e.notes = append(e.notes, f) }
