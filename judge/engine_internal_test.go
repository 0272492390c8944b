package judge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of retrievals that the judge cannot all finish in time: the
// scheduler finishes them one after another (earliest deadline first), so
// that nearly every request paid for contributes to a scored retrieval
// (goodput 1/K for K chunks) and the number scored approaches what the
// slots allow before the deadline; the rest fail unsent.
func TestBurstFinishesWholeRetrievals(t *testing.T) {
	const (
		spans    = 100
		chunks   = 3
		slots    = 4
		latency  = 40 * time.Millisecond
		deadline = 10 * latency
	)
	s := testSettings()
	s.MaxConcurrency = slots
	be := &SlowBackend{Latency: latency}
	e := testEngine(t, s, be)

	var wg sync.WaitGroup
	var scored, late atomic.Int64
	var mu sync.Mutex
	errs := map[string]int{}
	start := time.Now()
	for i := range spans {
		id := strings.Repeat("x", i)
		req := Request{Reference: "r", Chunks: []string{"yes 1" + id, "no 2" + id, "yes 3" + id}}
		t0, err := e.Admit(req, deadline)
		if err != nil {
			mu.Lock()
			errs[err.Error()]++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		t0.Commit(func(res Result, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs[err.Error()]++
				mu.Unlock()
				return
			}
			scored.Add(1)
			if time.Since(start) > deadline+latency {
				late.Add(1)
			}
		})
	}
	wg.Wait()
	paid := be.Attempts.Load()
	// What the slots allow by the deadline at the latency the backend
	// really had: a loaded machine adds to the sleep.
	e.mu.Lock()
	measured := max(e.latency.mean, latency)
	e.mu.Unlock()
	capacity := float64(slots) * float64(deadline) / float64(measured) / chunks
	t.Logf("scored %d of %d (capacity %.1f), requests paid %d, goodput %.3f (ideal %.3f), other outcomes %v",
		scored.Load(), spans, capacity, paid, float64(scored.Load())/float64(paid), 1.0/chunks, errs)
	if got := float64(scored.Load()); got < 0.6*capacity {
		t.Errorf("scored %v retrievals, want close to the %.1f the slots allow", got, capacity)
	}
	if goodput := float64(scored.Load()) / float64(paid); goodput < 0.8/chunks {
		t.Errorf("goodput %.3f retrievals per request, want close to 1/%d", goodput, chunks)
	}
	if late.Load() > 0 {
		t.Errorf("%d retrievals finished after their deadline", late.Load())
	}
}

// A judgement that a worker finds decided when it takes it (from the cache,
// here) is ended there: its done must not wait for the next event in the
// engine, which may never come.
func TestJudgementEndedInTakeIsReportedAtOnce(t *testing.T) {
	gate := make(chan struct{})
	be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
		if chunks[0] == "busy" {
			<-gate
		}
		return allRelevant(chunks), Usage{}, nil
	}}
	s := testSettings()
	s.MaxConcurrency = 1
	s.CacheSize = 10
	e := testEngine(t, s, be)
	busy := make(chan error, 1)
	go func() {
		_, err := e.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"busy"}})
		busy <- err
	}()
	for stateOf(e).running == 0 {
		time.Sleep(time.Millisecond)
	}
	// Both wait for the one slot with "x" to ask; the first to get it
	// decides "x" for the second, which the worker then finds in the cache.
	done := make(chan error, 2)
	for range 2 {
		tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"x"}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		tk.Commit(func(_ Result, err error) { done <- err })
	}
	close(gate)
	for i := range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("judgement %d, decided by the worker, was never reported; engine %v", i+1, stateOf(e))
		}
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
}

// An inline backend gets no verdict cache, whatever the settings say: it
// judges a retrieval again for less than keeping its verdicts costs
// (cacheSizeFor), and reports no lookups.
func TestInlineBackendHasNoVerdictCache(t *testing.T) {
	be := &scriptBackend{inline: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
		return allRelevant(chunks), Usage{}, nil
	}}
	s := testSettings()
	s.CacheSize = 10
	e := testEngine(t, s, be)
	if e.cache.lru != nil {
		t.Fatal("an inline judge has a verdict cache")
	}
}

// chaosBackend answers after a short random latency and fails at random:
// retryable server errors and bad replies (with a tiny Retry-After so that
// backoffs take no real time), permanent rejections, and refusals to be
// retried at once (retryNow).
type chaosBackend struct {
	perChunk bool
	failRate float64
	mu       sync.Mutex
	rng      *rand.Rand
	attempts atomic.Int64
}

func newChaosBackend(perChunk bool, failRate float64, seed uint64) *chaosBackend {
	return &chaosBackend{perChunk: perChunk, failRate: failRate, rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

func (b *chaosBackend) ID() string        { return "test:chaos" }
func (b *chaosBackend) PerChunk() bool    { return b.perChunk }
func (b *chaosBackend) Inline() bool      { return false }
func (b *chaosBackend) CacheSalt() string { return b.ID() }
func (b *chaosBackend) Close()            {}

func (b *chaosBackend) roll() (float64, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rng.Float64(), time.Duration(b.rng.IntN(1500)) * time.Microsecond
}

func (b *chaosBackend) Attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	b.attempts.Add(1)
	r, lat := b.roll()
	t := time.NewTimer(lat)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, Usage{}, Cancelled(ctx.Err(), true)
	}
	f := b.failRate
	switch {
	case r < f/4:
		return nil, Usage{}, NewError(ReasonServerError, 500, "").WithRetryAfter(time.Millisecond)
	case r < f/2:
		return nil, Usage{}, NewError(ReasonBadReply, 0, "").WithRetryAfter(time.Millisecond)
	case r < 3*f/4:
		return nil, Usage{}, NewError(ReasonRejected, 400, "")
	case r < f:
		return nil, Usage{}, NewUnsentError(ReasonInvalidRequest, "").RetryNow()
	}
	out := make([]Verdict, len(chunks))
	for i, c := range chunks {
		out[i] = Verdict{Relevant: strings.Contains(c, "yes"), Reason: c}
	}
	return out, Usage{PromptTokens: 1}, nil
}

// lockProbeObserver takes the engine's lock on every call: called under
// e.mu, it deadlocks, which the stress test reports as callbacks that never
// came.
type lockProbeObserver struct {
	e      atomic.Pointer[Engine]
	misses atomic.Int64
}

func (o *lockProbeObserver) touch() {
	if e := o.e.Load(); e != nil {
		e.mu.Lock()
		e.mu.Unlock() //nolint:staticcheck // an empty critical section is the point
	}
}
func (o *lockProbeObserver) JudgeRequest(Purpose, Outcome, Reason, time.Duration, Usage) { o.touch() }
func (o *lockProbeObserver) CacheLookups(_, misses int) {
	o.misses.Add(int64(misses))
	o.touch()
}
func (o *lockProbeObserver) JudgeHealth(error) { o.touch() }

var vocab = []string{"yes alpha", "no beta", "yes gamma", "no delta", "yes epsilon", "no zeta"}

// runChaos makes many concurrent judgements, identical and distinct, with
// random deadlines, cancellations and abandons, on a judge that fails at
// random, and checks that each committed judgement ends exactly once with
// one verdict per chunk, and (unless closeAfter > 0 closes the engine
// midway) that the engine ends with no flight, job, queued group or unit
// left.
func runChaos(t *testing.T, perChunk bool, failRate float64, closeAfter time.Duration, seed uint64) {
	be := newChaosBackend(perChunk, failRate, seed)
	obs := &lockProbeObserver{}
	set := testSettings()
	set.MaxConcurrency = 4
	set.MaxRetries = 2
	set.CacheSize = 8 // small: evictions make identical chunks ask again
	e := testEngine(t, set, be, WithObserver(obs))
	// A budget that never refills and never runs out: at the end it must
	// hold what it started with less one token per request made for a new
	// key (in per-chunk mode, one per chunk looked up and missed).
	const bucket = 1e6
	e.budget = newBudget(bucket, stoppedClock{})
	obs.e.Store(e)
	closed := false

	const goroutines, each = 8, 60
	var wg sync.WaitGroup
	var committed, calledTwice, wrongLen atomic.Int64
	var pending sync.Map // *Ticket -> request, until done
	var outcomes sync.Map
	var gwg sync.WaitGroup
	for g := range goroutines {
		gwg.Add(1)
		go func() {
			defer gwg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for range each {
				n := 1 + rng.IntN(4)
				chunks := make([]string, n)
				for i := range chunks {
					chunks[i] = vocab[rng.IntN(len(vocab))]
					if rng.IntN(3) == 0 {
						chunks[i] += fmt.Sprint(" ", rng.IntN(8))
					}
				}
				if rng.IntN(10) == 0 {
					chunks[0] = "  " // empty chunk
				}
				req := Request{Query: fmt.Sprint("q", rng.IntN(2)), Reference: "r", Chunks: chunks}
				var within time.Duration
				if rng.IntN(3) > 0 {
					within = time.Duration(2+rng.IntN(150)) * time.Millisecond
				}
				tk, err := e.Admit(req, within)
				if err != nil {
					outcomes.Store("admit: "+err.Error(), true)
					continue
				}
				if rng.IntN(20) == 0 {
					tk.Abandon()
					continue
				}
				var calls atomic.Int32
				wg.Add(1)
				committed.Add(1)
				pending.Store(tk, req)
				tk.Commit(func(res Result, err error) {
					if calls.Add(1) != 1 {
						calledTwice.Add(1)
						return
					}
					pending.Delete(tk)
					if err == nil && len(res.Verdicts) != len(req.Chunks) {
						wrongLen.Add(1)
					}
					if err != nil {
						outcomes.Store(err.Error(), true)
					}
					// Calling the engine from a callback must not deadlock.
					if t2, err := e.Admit(Request{Reference: "r", Chunks: []string{"cb"}}, 0); err == nil {
						t2.Abandon()
					}
					wg.Done()
				})
				if rng.IntN(3) == 0 {
					d := time.Duration(rng.IntN(20)) * time.Millisecond
					time.AfterFunc(d, func() { tk.Cancel(ErrDeadline) })
				}
				if rng.IntN(4) == 0 {
					time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
				}
			}
		}()
	}
	if closeAfter > 0 {
		time.Sleep(closeAfter)
		_ = e.Close()
		closed = true
	}
	gwg.Wait()
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		n := 0
		pending.Range(func(k, v any) bool {
			if n < 5 {
				t.Logf("never ended: %+v (job %+v)", v, *k.(*Ticket).j)
			}
			n++
			return true
		})
		t.Fatalf("%d of %d committed judgements never ended; engine %v", n, committed.Load(), stateOf(e))
	}
	if calledTwice.Load() > 0 || wrongLen.Load() > 0 {
		t.Fatalf("done called twice %d times, wrong verdict count %d times", calledTwice.Load(), wrongLen.Load())
	}
	var seen []string
	outcomes.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	t.Logf("committed %d, attempts %d, outcomes %q", committed.Load(), be.attempts.Load(), seen)
	if closed {
		return
	}
	s := waitIdle(t, e)
	if s.flights != 0 || s.queued != 0 || s.ready != 0 {
		t.Fatalf("after every judgement ended: %v", s)
	}
	if perChunk {
		if got, want := budgetTokens(e), bucket-float64(obs.misses.Load()); got != want {
			t.Fatalf("budget holds %v, want %v (%d requests for new keys)", got, want, obs.misses.Load())
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestChaosPerChunk(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runChaos(t, true, 0.3, 0, seed) })
	}
}

func TestChaosBatched(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runChaos(t, false, 0.3, 0, seed) })
	}
}

func TestChaosCloseMidway(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runChaos(t, seed%2 == 0, 0.3, time.Duration(1+seed*3)*time.Millisecond, seed)
		})
	}
}

// A judge failing most requests opens the health breaker midway: queued
// judgements are failed with the outage, probes go through one at a time.
func TestChaosOutage(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runChaos(t, seed%2 == 0, 0.95, 0, seed) })
	}
}
