package judge

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
)

// slowBackend answers every chunk after a fixed real latency, counting the
// attempts it is paid for.
type slowBackend struct {
	latency  time.Duration
	attempts atomic.Int64
	fail     atomic.Pointer[Error]
}

func (b *slowBackend) id() string   { return "test:slow" }
func (b *slowBackend) batch() int   { return 1 }
func (b *slowBackend) inline() bool { return false }
func (b *slowBackend) close()       {}

func (b *slowBackend) attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	b.attempts.Add(1)
	t := time.NewTimer(b.latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, Usage{}, &callerError{err: ctx.Err(), sent: true}
	}
	if e := b.fail.Load(); e != nil {
		cp := *e
		return nil, Usage{}, &cp
	}
	out := make([]Verdict, len(chunks))
	for i, c := range chunks {
		out[i] = Verdict{Relevant: strings.Contains(c, "yes")}
	}
	return out, Usage{PromptTokens: 1}, nil
}

func testEngine(t *testing.T, c Config, be backend, opts ...Option) *Engine {
	t.Helper()
	o := options{clock: realClock{}, observer: nopObserver{}, jitter: func() float64 { return 0 }}
	for _, opt := range opts {
		opt(&o)
	}
	e := newEngine(c, be, o)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// A burst of retrievals that the judge cannot all finish in time: the
// scheduler finishes them one after another (earliest deadline first)
// instead of interleaving their requests, so that nearly every request paid
// for contributes to a scored retrieval (goodput 1/K for K chunks), and the
// number scored approaches what the slots allow before the deadline. The
// rest fail at once or as soon as that is clear, unsent.
//
// Before the scheduler, the same burst (100 retrievals x 3 chunks, 4 slots,
// deadline = 10 latencies) paid for 36 requests and finished none.
func TestBurstFinishesWholeRetrievals(t *testing.T) {
	const (
		spans    = 100
		chunks   = 3
		slots    = 4
		latency  = 40 * time.Millisecond
		deadline = 10 * latency
	)
	c := testConfig("")
	c.MaxConcurrency = slots
	c.CacheSize = 0
	be := &slowBackend{latency: latency}
	e := testEngine(t, c, be)

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
	paid := be.attempts.Load()
	// What the slots allow by the deadline at the latency the backend
	// really had (a loaded machine adds to the sleep): 13.3 retrievals on
	// a quiet one.
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

// A judge that keeps failing opens the breaker: new judgements are refused
// at once with the failure's reason (not as budget or timeout), queued ones
// fail with it, the observer hears of it once, and a probe closes it again.
func TestBreakerOpensOnOutageAndProbeCloses(t *testing.T) {
	be := &slowBackend{latency: time.Millisecond}
	be.fail.Store(&Error{Reason: ReasonUnreachable, Detail: "connection refused", sent: true})
	clock := &manualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	obs := newRecordingObserver()
	c := testConfig("")
	c.MaxRetries = 0
	c.CacheSize = 0
	e := testEngine(t, c, be, WithClock(clock), WithObserver(obs))
	req := func(i int) Request { return Request{Reference: "r", Chunks: []string{"c" + strings.Repeat("x", i)}} }
	for i := range breakerThreshold {
		_, err := e.Judge(context.Background(), req(i))
		if ReasonOf(err) != ReasonUnreachable {
			t.Fatalf("judgement %d: %v", i, err)
		}
	}
	if h := obs.snapshot().health; len(h) != 1 || ReasonOf(h[0]) != ReasonUnreachable {
		t.Fatalf("health reports %v, want one unreachable", h)
	}
	sent := be.attempts.Load()
	_, err := e.Admit(req(100), 0)
	if ReasonOf(err) != ReasonUnreachable || !strings.Contains(err.Error(), "not asked again until a probe succeeds") {
		t.Fatalf("while open: %v", err)
	}
	if be.attempts.Load() != sent {
		t.Fatal("a refused judgement was sent")
	}
	// The probe is due after a second; the judge has recovered.
	clock.advance(firstProbeAfter)
	be.fail.Store(nil)
	if _, err := e.Judge(context.Background(), req(101)); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if h := obs.snapshot().health; len(h) != 2 || h[1] != nil {
		t.Fatalf("health reports %v, want a recovery", h)
	}
	if _, err := e.Judge(context.Background(), req(102)); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

// Only one probe at a time goes through while the breaker is open; a failed
// probe keeps it open and backs off.
func TestBreakerLetsOneProbeThrough(t *testing.T) {
	be := &slowBackend{latency: time.Millisecond}
	be.fail.Store(&Error{Reason: ReasonServerError, Status: 503, sent: true})
	clock := &manualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	c := testConfig("")
	c.MaxRetries = 0
	c.CacheSize = 0
	e := testEngine(t, c, be, WithClock(clock))
	for i := range breakerThreshold {
		_, _ = e.Judge(context.Background(), Request{Reference: "r", Chunks: []string{strings.Repeat("a", i+1)}})
	}
	clock.advance(firstProbeAfter)
	probe, err := e.Admit(Request{Reference: "r", Chunks: []string{"p1"}}, 0)
	if err != nil {
		t.Fatalf("probe refused: %v", err)
	}
	if _, err := e.Admit(Request{Reference: "r", Chunks: []string{"p2"}}, 0); ReasonOf(err) != ReasonServerError {
		t.Fatalf("a second judgement during the probe: %v", err)
	}
	done := make(chan error, 1)
	probe.Commit(func(_ Result, err error) { done <- err })
	if err := <-done; ReasonOf(err) != ReasonServerError {
		t.Fatalf("probe: %v", err)
	}
	if _, err := e.Admit(Request{Reference: "r", Chunks: []string{"p3"}}, 0); err == nil {
		t.Fatal("the breaker closed although the probe failed")
	}
}

// manualClock moves only when the test moves it; timers fire then.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (t *manualTimer) Stop() bool {
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		if !t.stopped {
			t.f()
		}
	}
}

// A reasoning model takes no temperature: the request goes without one,
// and nothing is refused inside the client library.
func TestReasoningModelSendsNoTemperature(t *testing.T) {
	srv := newChatServer(t, chattest.KeywordJudge("x"))
	c := testConfig(srv.URL)
	c.Model = "openai:o3-mini"
	obs := newRecordingObserver()
	j := mustNew(t, c, WithObserver(obs))
	if _, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if _, ok := r.Raw["temperature"]; ok {
		t.Fatalf("temperature sent to a reasoning model: %s", r.Raw["temperature"])
	}
	if s := obs.snapshot(); s.outcomes[OutcomeOK] != 1 || len(s.outcomes) != 1 {
		t.Fatalf("outcomes %v", s.outcomes)
	}
}

// A request the client library refuses is final and is not a judge
// request: it is not retried and not counted.
func TestClientSideRefusalIsFinalAndUncounted(t *testing.T) {
	srv := newChatServer(t, chattest.KeywordJudge("x"))
	c := testConfig(srv.URL)
	c.Model = "openai:o3-mini"
	obs := newRecordingObserver()
	j := mustNew(t, c, WithObserver(obs), WithClock(newFakeClock()))
	// As before the fix: a temperature go-openai refuses for o-series models.
	j.be.(*openAIBackend).noTemperature.Store(false)
	_, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"x"}})
	if ReasonOf(err) != ReasonInvalidRequest {
		t.Fatalf("err %v, want an invalid_request failure", err)
	}
	if srv.Calls() != 0 {
		t.Fatalf("%d requests reached the server", srv.Calls())
	}
	if s := obs.snapshot(); len(s.outcomes) != 0 {
		t.Fatalf("a request never sent was counted: %v", s.outcomes)
	}
}

// An endpoint that refuses the temperature under a model name we do not
// recognise (an Azure deployment of a reasoning model) is asked again
// without it, and from then on.
func TestTemperatureRefusalIsLearned(t *testing.T) {
	srv := newChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if _, ok := r.Raw["temperature"]; ok {
			return chattest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.","type":"invalid_request_error"}}`}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	c := testConfig(srv.URL)
	c.Model = "azure:my-reasoner"
	c.BaseURL = srv.URL
	j := mustNew(t, c)
	for i := range 2 {
		if _, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"x" + strings.Repeat("y", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls, want one refusal and two without temperature", srv.Calls())
	}
}

// Every request the observer counts reached the server, and every request
// the server received was counted, whatever ends the judgements: before the
// scheduler, judgements whose deadline passed while they waited for a slot
// were counted as failed requests although nothing was sent.
func TestRequestsCountedAreRequestsSent(t *testing.T) {
	srv := newChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("x")(n, r)
		if n%2 == 0 {
			rep = chattest.Reply{Status: 503}
		}
		rep.Delay = 60 * time.Millisecond
		return rep
	})
	c := testConfig(srv.URL)
	c.MaxConcurrency = 1
	c.MaxRetries = 1
	c.CacheSize = 0
	obs := newRecordingObserver()
	j := mustNew(t, c, WithObserver(obs), WithJitter(func() float64 { return 0 }))
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 330*time.Millisecond)
			defer cancel()
			_, _ = j.Judge(ctx, Request{Reference: "r", Chunks: []string{"x" + strings.Repeat("a", i)}})
		})
	}
	wg.Wait()
	_ = j.Close()
	s := obs.snapshot()
	total := 0
	for _, n := range s.outcomes {
		total += n
	}
	t.Logf("outcomes %v, server calls %d", s.outcomes, srv.Calls())
	if int64(total) != srv.Calls() {
		t.Fatalf("observer counted %d requests (%v), the server received %d", total, s.outcomes, srv.Calls())
	}
	if srv.Calls() > 7 {
		t.Fatalf("%d requests for 12 judgements that 1 slot can serve ~5 of in time", srv.Calls())
	}
}

// A chunk with no text is not relevant and costs no request; its reason
// says why.
func TestEmptyChunksAreNotSent(t *testing.T) {
	srv := newChatServer(t, chattest.KeywordJudge("x"))
	j := mustNew(t, testConfig(srv.URL))
	res, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"x", "", "  \n\t", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := relevant(res); got[0] != true || got[1] || got[2] || got[3] {
		t.Fatalf("verdicts %v", got)
	}
	if res.Verdicts[1].Reason != EmptyChunkReason || res.Verdicts[2].Reason != EmptyChunkReason {
		t.Fatalf("reasons %+v", res.Verdicts)
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d calls, want 2 (the empty chunks are not sent)", srv.Calls())
	}
	// All empty: no request at all.
	if _, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{""}}); err != nil || srv.Calls() != 2 {
		t.Fatalf("%v, %d calls", err, srv.Calls())
	}
}

// builtin:lexical is not cached, whatever cache.size says: it judges a
// retrieval again for less than keeping its verdicts costs (cacheSizeFor).
// Its repeats get the same verdicts, judged again, whether it is called
// inline or through the scheduler, and no cache lookup is counted.
func TestBuiltinJudgeIsNotCached(t *testing.T) {
	c := Config{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second,
		MaxConcurrency: 1, MaxChunkChars: 100, CacheSize: 10}
	obs := newRecordingObserver()
	j := mustNew(t, c, WithObserver(obs))
	if j.cache.lru != nil {
		t.Fatal("builtin:lexical has a verdict cache")
	}
	req := Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{"The Mona Lisa was painted by Leonardo da Vinci.", "Bananas are rich in potassium."}}
	first, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := relevant(first); !got[0] || got[1] {
		t.Fatalf("verdicts %v", got)
	}
	second, err := j.Judge(context.Background(), req)
	if err != nil || !slices.Equal(second.Verdicts, first.Verdicts) {
		t.Fatalf("%+v %v", second, err)
	}
	tk, err := j.Admit(req, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	tk.Commit(func(res Result, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- res
	})
	if third := <-done; !slices.Equal(third.Verdicts, first.Verdicts) {
		t.Fatalf("through the scheduler: %+v", third)
	}
	if s := obs.snapshot(); s.hits != 0 || s.misses != 0 {
		t.Fatalf("hits %d misses %d: no cache, no lookups", s.hits, s.misses)
	}
}

// Empty and overlong chunks keep their places among the verdicts of an
// inline judge: empty ones are decided without it, long ones cut.
func TestBuiltinInlineKeepsRanks(t *testing.T) {
	c := Config{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second,
		MaxConcurrency: 1, MaxChunkChars: 60}
	j := mustNew(t, c)
	long := "Bananas grow in bunches. " + strings.Repeat("Bananas are yellow. ", 5) + "The Mona Lisa was painted by Leonardo da Vinci."
	res, err := j.JudgeInline(Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{"  ", long, "The Mona Lisa was painted by Leonardo da Vinci.", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Verdicts) != 4 {
		t.Fatalf("%d verdicts", len(res.Verdicts))
	}
	for _, i := range []int{0, 3} {
		if v := res.Verdicts[i]; v.Relevant || v.Reason != EmptyChunkReason {
			t.Errorf("chunk %d: %+v", i, v)
		}
	}
	if got := relevant(res); got[1] || !got[2] {
		t.Fatalf("verdicts %v: the long chunk is read only up to max_chunk_chars", got)
	}
}

// builtin:lexical honours max_chunk_chars like every judge: text beyond it
// is not read.
func TestBuiltinHonoursMaxChunkChars(t *testing.T) {
	c := Config{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second,
		MaxConcurrency: 1, MaxChunkChars: 40}
	j := mustNew(t, c)
	filler := strings.Repeat("Bananas grow in bunches. ", 4)
	res, err := j.Judge(context.Background(), Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{filler + "The Mona Lisa was painted by Leonardo da Vinci.", "The Mona Lisa was painted by Leonardo da Vinci."}})
	if err != nil {
		t.Fatal(err)
	}
	if got := relevant(res); got[0] || !got[1] {
		t.Fatalf("verdicts %v: the answer beyond max_chunk_chars must not be read", got)
	}
}

// ... and reads all of it, even beyond the lexical judge's own default cut
// (lexical.MaxChunkRunes), in a cascade's first stage too: every stage sees
// the same chunk.
func TestBuiltinReadsUpToMaxChunkChars(t *testing.T) {
	filler := strings.Repeat("Bananas grow in bunches. ", 400) // 10,000 runes
	req := Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{filler + "The Mona Lisa was painted by Leonardo da Vinci.", "Bananas are rich in potassium."}}
	srv := newChatServer(t, labelJudge(nil))
	cascade := testConfig(srv.URL)
	cascade.Model, cascade.MinConfidence = "cascade:openai:gpt-test", 0 // the first stage decides all
	for _, c := range []Config{
		{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second, MaxConcurrency: 1},
		cascade,
	} {
		c.MaxChunkChars = 20000
		res, err := mustNew(t, c).Judge(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := relevant(res); !got[0] || got[1] {
			t.Fatalf("%s: verdicts %v: the answer within max_chunk_chars must be read", c.Model, got)
		}
	}
	if srv.Calls() != 0 {
		t.Fatalf("%d LLM calls: the first stage should have decided every chunk", srv.Calls())
	}
}

// Close ends every judgement at once, including requests in flight.
func TestCloseEndsJudgementsInFlight(t *testing.T) {
	srv := newChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Delay: 10 * time.Second} })
	j, err := New(testConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for i := range 3 {
		go func() {
			_, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{strings.Repeat("c", i+1)}})
			done <- err
		}()
	}
	for srv.Calls() < 3 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { _ = j.Close(); close(closed) }()
	for range 3 {
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("err %v, want ErrClosed", err)
		}
	}
	<-closed
}

// A judgement that a worker finds decided when it takes it (from the cache,
// here) is ended there: its done must not wait for the next event in the
// engine, which may never come. The worker used to go back to waiting for
// work with the completion (and the observer calls) still queued.
func TestJudgementEndedInTakeIsReportedAtOnce(t *testing.T) {
	gate := make(chan struct{})
	be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
		if chunks[0] == "busy" {
			<-gate
		}
		return allRelevant(chunks), Usage{}, nil
	}}
	c := testConfig("")
	c.MaxConcurrency = 1
	c.CacheSize = 10
	e := testEngine(t, c, be)
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

// MinRetryBackoff, which configuration relies on to refuse a judge.timeout
// leaving no room for a retry, is the engine's shortest backoff.
func TestMinRetryBackoffIsTheShortestBackoff(t *testing.T) {
	for _, jitter := range []float64{0, 0.5, 0.999} {
		e := mustNew(t, Config{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second,
			MaxConcurrency: 1, MaxChunkChars: 100}, WithJitter(func() float64 { return jitter }))
		for attempt := range 20 {
			if d := e.backoff(attempt); d < MinRetryBackoff {
				t.Fatalf("backoff(%d) = %v with jitter %v, below MinRetryBackoff %v", attempt, d, jitter, MinRetryBackoff)
			}
		}
		if jitter == 0 && e.backoff(0) != MinRetryBackoff {
			t.Fatalf("backoff(0) = %v without jitter, want MinRetryBackoff %v", e.backoff(0), MinRetryBackoff)
		}
	}
}
