package judge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

func (b *chaosBackend) id() string { return "test:chaos" }
func (b *chaosBackend) batch() int {
	if b.perChunk {
		return 1
	}
	return 0
}
func (b *chaosBackend) inline() bool { return false }
func (b *chaosBackend) close()       {}

func (b *chaosBackend) roll() (float64, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rng.Float64(), time.Duration(b.rng.IntN(1500)) * time.Microsecond
}

func (b *chaosBackend) attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	b.attempts.Add(1)
	r, lat := b.roll()
	t := time.NewTimer(lat)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, Usage{}, &callerError{err: ctx.Err(), sent: true}
	}
	f := b.failRate
	switch {
	case r < f/4:
		return nil, Usage{}, &Error{Reason: ReasonServerError, Status: 500, sent: true, retryAfter: time.Millisecond}
	case r < f/2:
		return nil, Usage{}, &Error{Reason: ReasonBadReply, sent: true, retryAfter: time.Millisecond}
	case r < 3*f/4:
		return nil, Usage{}, &Error{Reason: ReasonRejected, Status: http.StatusBadRequest, sent: true}
	case r < f:
		return nil, Usage{}, &Error{Reason: ReasonInvalidRequest, retryNow: true}
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
func (o *lockProbeObserver) JudgeRequest(Outcome, Reason, time.Duration, Usage) { o.touch() }
func (o *lockProbeObserver) CacheLookups(_, misses int) {
	o.misses.Add(int64(misses))
	o.touch()
}
func (o *lockProbeObserver) JudgeHealth(error) { o.touch() }

// engineState is the engine's bookkeeping at one moment.
type engineState struct {
	flights, live, running, ready, delayed, queued int
}

func (s engineState) String() string {
	return fmt.Sprintf("flights %d, live %d, running %d, ready %d, delayed %d, queued %d",
		s.flights, s.live, s.running, s.ready, s.delayed, s.queued)
}

func stateOf(e *Engine) engineState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return engineState{len(e.flights), len(e.live), len(e.running), len(e.ready), len(e.delayed), e.queued}
}

// waitIdle waits until nothing runs or waits out a backoff, and returns the
// engine's state then.
func waitIdle(t *testing.T, e *Engine) engineState {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := stateOf(e)
		if s.running == 0 && s.delayed == 0 && s.live == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine never idle: %v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

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
	c := testConfig("")
	c.MaxConcurrency = 4
	c.MaxRetries = 2
	c.CacheSize = 8 // small: evictions make identical chunks ask again
	e := newEngine(c, be, options{clock: realClock{}, observer: obs, jitter: func() float64 { return 0 }})
	// A budget that never refills and never runs out: at the end it must
	// hold what it started with less one token per request made for a new
	// key (in per-chunk mode, one per chunk looked up and missed).
	const bucket = 1e6
	e.budget = newBudget(bucket, stoppedClock{})
	obs.e.Store(e)
	closed := false
	defer func() {
		if !closed {
			_ = e.Close()
		}
	}()

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
	closed = true
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

// errIs is errors.Is, for brevity in the targeted tests below.
var errIs = errors.Is

// scriptBackend runs a test's function for each attempt.
type scriptBackend struct {
	perChunk bool
	f        func(ctx context.Context, chunks []string) ([]Verdict, Usage, error)
}

func (b *scriptBackend) id() string { return "test:script" }
func (b *scriptBackend) batch() int {
	if b.perChunk {
		return 1
	}
	return 0
}
func (b *scriptBackend) inline() bool { return false }
func (b *scriptBackend) close()       {}
func (b *scriptBackend) attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	return b.f(ctx, chunks)
}

func allRelevant(chunks []string) []Verdict {
	out := make([]Verdict, len(chunks))
	for i := range out {
		out[i] = Verdict{Relevant: true}
	}
	return out
}

// A batched reply that breaks the contract is asked again chunk by chunk.
// If the judgement that owned those units is cancelled while one of them is
// in flight, the others are orphaned; when the one in flight then succeeds,
// the flight is left in e.flights with positions nobody will ever decide.
// A later identical judgement attaches to it and waits forever.
func TestSplitFlightOrphanedWhileOneUnitRunsIsNotLeaked(t *testing.T) {
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	var calls atomic.Int32
	be := &scriptBackend{f: func(ctx context.Context, chunks []string) ([]Verdict, Usage, error) {
		switch n := calls.Add(1); {
		case n == 1:
			return nil, Usage{}, &Error{Reason: ReasonBadReply, sent: true} // batched reply broken: split
		case n == 2:
			entered <- struct{}{}
			<-release // the first chunk's request is in flight while its owner is cancelled
		}
		return allRelevant(chunks), Usage{}, nil
	}}
	c := testConfig("")
	c.MaxConcurrency = 1
	c.MaxRetries = 0
	c.CacheSize = 0
	e := testEngine(t, c, be)
	req := Request{Reference: "r", Chunks: []string{"a", "b", "c"}}

	tk, err := e.Admit(req, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	tk.Commit(func(_ Result, err error) { first <- err })
	<-entered
	tk.Cancel(ErrDeadline)
	if err := <-first; !errIs(err, ErrDeadline) {
		t.Fatalf("first: %v", err)
	}
	close(release)
	if s := waitIdle(t, e); s.flights != 0 {
		t.Errorf("after the only judgement ended: %v", s)
	}

	// The same retrieval again: it must be judged, not wait on the leftover.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := e.Judge(ctx, req); err != nil {
		t.Fatalf("second identical judgement: %v (engine %v)", err, stateOf(e))
	}
}

// Commit documents that a judgement decided at admission (Decided) has its
// done called before Commit returns; the processor relies on it to annotate
// the span in place, in its batch, before the batch goes on. But Commit
// queues the completion on e.done and drains after unlocking: a worker
// draining at that moment takes it and calls done later, from its own
// goroutine, while the caller goes on with the span.
func TestDecidedCommitCallsDoneBeforeReturning(t *testing.T) {
	be := newChaosBackend(true, 0, 1)
	c := testConfig("")
	c.MaxConcurrency = 4
	c.CacheSize = 1000
	e := testEngine(t, c, be)
	cached := Request{Reference: "r", Chunks: []string{"yes cached"}}
	if _, err := e.Judge(context.Background(), cached); err != nil {
		t.Fatal(err)
	}
	// Other goroutines drain too: every Admit, Commit and Cancel does, as
	// do the workers after each request.
	stop := make(chan struct{})
	var bg sync.WaitGroup
	for range 2 {
		bg.Add(1)
		go func() {
			defer bg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"bg"}}, 0); err == nil {
					tk.Abandon()
				}
			}
		}()
	}
	defer func() { close(stop); bg.Wait() }()
	late := 0
	const tries = 20000
	for range tries {
		tk, err := e.Admit(cached, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !tk.Decided() {
			t.Fatal("not decided from the cache")
		}
		var called atomic.Bool
		tk.Commit(func(Result, error) { called.Store(true) })
		if !called.Load() {
			late++
		}
	}
	if late > 0 {
		t.Fatalf("%d of %d decided commits returned before calling done", late, tries)
	}
}

func budgetTokens(e *Engine) float64 {
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	return e.budget.tokens
}

// The budget pays for every request sent: after judgements end with no time
// passing, the bucket holds what it started with less the requests sent.
// Admit reserves one token per distinct key not in flight, but the
// scheduler refunds one for every group answered by a flight, reserved or
// not (a chunk repeated in the retrieval, or a key that was in flight at
// Admit), and sends the groups left over with no token at all.
func TestBudgetPaysForEveryRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, e *Engine, gate chan struct{})
	}{
		{"repeated chunk", func(t *testing.T, e *Engine, gate chan struct{}) {
			tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "a", "b"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			tk.Commit(func(_ Result, err error) { done <- err })
			for stateOf(e).running < 2 { // "a" once, "b"
				time.Sleep(time.Millisecond)
			}
			close(gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}},
		{"in flight at Admit, done by Commit", func(t *testing.T, e *Engine, gate chan struct{}) {
			first, err := e.Admit(Request{Reference: "r", Chunks: []string{"a"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			firstDone := make(chan struct{})
			first.Commit(func(Result, error) { close(firstDone) })
			for stateOf(e).running == 0 {
				time.Sleep(time.Millisecond)
			}
			second, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "b"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			close(gate)
			<-firstDone
			waitIdle(t, e)
			done := make(chan error, 1)
			second.Commit(func(_ Result, err error) { done <- err })
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			var sent atomic.Int32
			be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
				<-gate
				sent.Add(1)
				return allRelevant(chunks), Usage{}, nil
			}}
			c := testConfig("")
			c.MaxRequestsPerSecond = 5
			c.CacheSize = 0
			clock := &manualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
			e := testEngine(t, c, be, WithClock(clock))
			tc.run(t, e, gate)
			waitIdle(t, e)
			if got, want := budgetTokens(e), 5-float64(sent.Load()); got != want {
				t.Fatalf("%d requests sent, bucket holds %v tokens, want %v", sent.Load(), got, want)
			}
		})
	}
}

// The processor's max_wait timer may fire between Admit and Commit (in
// start, and in judgeJoined after it read h.expired): its Cancel must not
// be lost, or the span outlives max_wait behind other spans' requests.
func TestCancelBeforeCommitIsKept(t *testing.T) {
	be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
		return allRelevant(chunks), Usage{}, nil
	}}
	c := testConfig("")
	c.MaxRequestsPerSecond = 5
	clock := &manualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	e := testEngine(t, c, be, WithClock(clock))
	tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "b"}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tk.Cancel(ErrDeadline)
	done := make(chan error, 1)
	tk.Commit(func(_ Result, err error) { done <- err })
	if err := <-done; !errIs(err, ErrDeadline) {
		t.Fatalf("err %v, want the ErrDeadline given to Cancel before Commit", err)
	}
	waitIdle(t, e)
	if got := budgetTokens(e); got != 5 {
		t.Fatalf("bucket holds %v, want its 5 tokens back", got)
	}
}

// stoppedClock is a clock at which no time passes.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }
func (stoppedClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// A judge failing most requests opens the health breaker midway: queued
// judgements are failed with the outage, probes go through one at a time.
func TestChaosOutage(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runChaos(t, seed%2 == 0, 0.95, 0, seed) })
	}
}
