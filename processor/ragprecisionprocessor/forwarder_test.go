package ragprecisionprocessor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// Holding a span out of a batch keeps its resource, scope and the other
// spans where they were.
func TestHeldSpanKeepsResourceAndScope(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.td.ResourceSpans().At(0).SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	b.ss.Scope().SetVersion("1.2.3")
	b.plain("before")
	b.project("retrieve", question, "Paris", capitalChunks...)
	b.plain("after")
	h.consume(b.td)
	h.waitSpans(3)
	for _, td := range h.sink.AllTraces() {
		rs := td.ResourceSpans().At(0)
		if rs.SchemaUrl() == "" || rs.ScopeSpans().At(0).Scope().Version() != "1.2.3" || rs.ScopeSpans().At(0).Scope().Name() != "test-instrumentation" {
			t.Fatalf("resource/scope lost: %v", rs.Resource().Attributes().AsRaw())
		}
		if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "svc" {
			t.Fatal("service.name lost")
		}
	}
	first := h.sink.AllTraces()[0]
	spans := first.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if spans.Len() != 2 || spans.At(0).Name() != "before" || spans.At(1).Name() != "after" {
		t.Fatalf("synchronous batch: %d spans", spans.Len())
	}
}

// mixedBatch returns a batch of n retrieval spans (distinct chunks, so the
// cache cannot answer them) and n plain spans, over two resources.
func mixedBatch(round, n int) ptrace.Traces {
	b := newBatch("svc-a")
	rs2 := b.td.ResourceSpans().AppendEmpty()
	rs2.Resource().Attributes().PutStr("service.name", "svc-b")
	other := &batch{td: b.td, ss: rs2.ScopeSpans().AppendEmpty()}
	for i := range n {
		target := b
		if i%2 == 1 {
			target = other
		}
		target.project(fmt.Sprintf("r%d-%d", round, i), "q", "Paris",
			fmt.Sprintf("Paris chunk %d-%d", round, i), fmt.Sprintf("Berlin chunk %d-%d", round, i))
		target.plain(fmt.Sprintf("p%d-%d", round, i))
	}
	return b.td
}

// TestNoSpanIsLost sends the same traffic through every failure the
// processor must survive and checks that every span comes out, once.
func TestNoSpanIsLost(t *testing.T) {
	type scenario struct {
		name   string
		judge  chattest.Handler
		mutate func(*config.Config)
		opts   []judge.Option
		// shutdownTimeout is the deadline of the Shutdown that ends the
		// run; 0 gives it none, and it waits for every judgement.
		shutdownTimeout time.Duration
		wantStatus      string
	}
	slow := func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = 5 * time.Second
		return rep
	}
	scenarios := []scenario{
		{name: "judge down", judge: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 503} }, wantStatus: ragattr.StatusJudgeError},
		{name: "judge slower than max_wait", judge: slow, mutate: func(c *config.Config) { setMaxWait(c, 80*time.Millisecond) }, wantStatus: ragattr.StatusTimeout},
		{name: "over budget", judge: chattest.KeywordJudge("Paris"), mutate: func(c *config.Config) { c.Judge.MaxRequestsPerSecond = 0.5 }, opts: []judge.Option{judge.WithClock(stoppedClock{})}, wantStatus: ragattr.StatusBudget},
		{name: "over max_pending_spans", judge: slow, mutate: func(c *config.Config) { c.MaxPendingSpans = 2; setMaxWait(c, 80*time.Millisecond) }, wantStatus: ragattr.StatusOverflow},
		{name: "shutdown while judging", judge: slow, shutdownTimeout: 30 * time.Millisecond, wantStatus: ragattr.StatusShutdown},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			srv := chatServer(t, sc.judge)
			h := newHarness(t, func(c *config.Config) {
				llmJudge(srv.URL)(c)
				if sc.mutate != nil {
					sc.mutate(c)
				}
			}, sc.opts...)
			const rounds, perRound = 3, 6
			for r := range rounds {
				before := h.sink.SpanCount()
				h.consume(mixedBatch(r, perRound))
				// Plain spans never wait.
				if got := h.sink.SpanCount() - before; got < perRound {
					t.Fatalf("round %d: %d spans forwarded synchronously, want at least the %d plain ones", r, got, perRound)
				}
			}
			ctx := context.Background()
			if sc.shutdownTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, sc.shutdownTimeout)
				defer cancel()
			}
			h.shutdown(ctx)
			assertExactlyOnce(t, h.sink, rounds, perRound)
			statuses := map[string]int{}
			for _, s := range h.spansByName() {
				if st := attrStr(s, ragattr.Status); st != "" {
					statuses[st]++
				}
			}
			if statuses[sc.wantStatus] == 0 {
				t.Fatalf("no span with status %s: %v", sc.wantStatus, statuses)
			}
		})
	}
}

func assertExactlyOnce(t *testing.T, sink *consumertest.TracesSink, rounds, perRound int) {
	t.Helper()
	seen := map[string]int{}
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { seen[s.Name()]++ })
	}
	want := 2 * rounds * perRound
	if sink.SpanCount() != want || len(seen) != want {
		t.Fatalf("out %d spans (%d distinct), in %d", sink.SpanCount(), len(seen), want)
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("span %s forwarded %d times", name, n)
		}
	}
}

// flakySink refuses the first failures calls, then accepts.
type flakySink struct {
	consumertest.TracesSink
	mu        sync.Mutex
	failures  int
	permanent bool
}

func (f *flakySink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	f.mu.Lock()
	if f.failures > 0 {
		f.failures--
		f.mu.Unlock()
		err := errors.New("downstream unavailable")
		if f.permanent {
			err = consumererror.NewPermanent(err)
		}
		return err
	}
	f.mu.Unlock()
	return f.TracesSink.ConsumeTraces(ctx, td)
}

// A permanent downstream error is not retried; it is logged and counted.
func TestPermanentDownstreamErrorIsCounted(t *testing.T) {
	sink := &flakySink{permanent: true}
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarnessNext(t, sink, &sink.TracesSink, llmJudge(srv.URL))
	sink.failures = 1
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	h.consume(b.td)
	h.shutdown(context.Background())
	if n := counterValue(t, h.tel, metricDropped, nil); n != 1 {
		t.Fatalf("dropped %d, want 1", n)
	}
}

// The synchronous path returns the next consumer's error to the caller,
// which sends the whole batch again: the spans it held are let go, so that
// nothing arrives twice.
func TestDownstreamErrorOnSynchronousPath(t *testing.T) {
	bj := newBlockingJudge("Paris")
	srv := chatServer(t, bj.handle)
	defer bj.open()
	sink := &flakySink{}
	h := newHarnessNext(t, sink, &sink.TracesSink, llmJudge(srv.URL))
	sink.failures = 1
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	b.plain("plain")
	retry := ptrace.NewTraces()
	b.td.CopyTo(retry)
	if err := h.p.ConsumeTraces(context.Background(), b.td); err == nil {
		t.Fatal("the caller must see the downstream error")
	}
	if h.p.held != 0 || counterValue(t, h.tel, metricHeld, nil) != 0 {
		t.Fatalf("%d spans still held after the batch was refused", h.p.held)
	}
	if err := h.p.ConsumeTraces(context.Background(), retry); err != nil {
		t.Fatal(err)
	}
	bj.open()
	h.shutdown(context.Background())
	assertEachOnce(t, h.sink, "retrieve", "plain")
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("held span: %q", got)
	}
}

// A held span refused downstream, also for long, is retried until the
// downstream recovers, and arrives scored.
func TestDownstreamRecoversAfterLongRefusal(t *testing.T) {
	sink := &flakySink{}
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarnessNext(t, sink, &sink.TracesSink, llmJudge(srv.URL))
	sink.failures = 5 // 100+200+400+800+1600 ms of backoff
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	h.shutdown(context.Background())
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q", got)
	}
	if n := counterValue(t, h.tel, metricDropped, nil); n != 0 {
		t.Fatalf("dropped %d", n)
	}
}

func assertEachOnce(t *testing.T, sink *consumertest.TracesSink, names ...string) {
	t.Helper()
	seen := map[string]int{}
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { seen[s.Name()]++ })
	}
	for _, n := range names {
		if seen[n] != 1 {
			t.Fatalf("span %s arrived %d times (%v)", n, seen[n], seen)
		}
	}
	if len(seen) != len(names) {
		t.Fatalf("spans %v, want %v", seen, names)
	}
}

// refusingSink refuses every batch that carries a span named "refuse", and
// takes a random moment over each call, so that forwards, deadline timers
// and judge callbacks interleave.
type refusingSink struct {
	consumertest.TracesSink
	mu  sync.Mutex
	rng *rand.Rand
}

var errRefused = errors.New("refused")

func (s *refusingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	refuse := false
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) { refuse = refuse || sp.Name() == "refuse" })
	s.mu.Lock()
	d := time.Duration(s.rng.IntN(3000)) * time.Microsecond
	s.mu.Unlock()
	time.Sleep(d)
	if refuse {
		return errRefused
	}
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// slowSink takes a while over every call and does not look at its context,
// like a consumer doing synchronous work; it records calls made after
// shutdownReturned is set.
type slowSink struct {
	consumertest.TracesSink
	delay            time.Duration
	shutdownReturned atomic.Bool
	lateCalls        atomic.Int64
}

func (s *slowSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if s.shutdownReturned.Load() {
		s.lateCalls.Add(1)
	}
	time.Sleep(s.delay)
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// Once Shutdown has given up on the forwarder (shutdown_timeout plus its
// grace), the spans still held are counted as dropped and Shutdown returns:
// the next component may be shut down next. The forwarder must not go on
// calling it for the rest of its queue (one call per caller context, each
// with a cancelled context), which delivers spans already counted as
// dropped, after Shutdown returned.
func TestNoForwardAfterShutdownGaveUp(t *testing.T) {
	const spans = 20
	sink := &slowSink{delay: 20 * time.Millisecond}
	h, _ := newBlockedHarnessNext(t, sink, &sink.TracesSink, func(c *config.Config) { c.ShutdownTimeout = 100 * time.Millisecond })
	for i := range spans {
		b := newBatch("svc")
		b.project(fmt.Sprint("retrieve-", i), "q", "Paris", fmt.Sprint("Paris ", i))
		if err := h.p.ConsumeTraces(context.Background(), b.td); err != nil { // one caller context each
			t.Fatal(err)
		}
	}
	if err := h.p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	sink.shutdownReturned.Store(true)
	arrivedBy := sink.SpanCount()
	dropped := counterValue(t, h.tel, metricDropped, nil)
	<-h.p.fwd.exited
	t.Logf("by Shutdown's return: %d arrived, %d counted dropped; in the end %d arrived, %d calls after Shutdown",
		arrivedBy, dropped, sink.SpanCount(), sink.lateCalls.Load())
	if n := sink.lateCalls.Load(); n > 0 {
		t.Errorf("%d calls to the next consumer after Shutdown returned", n)
	}
	if got := int64(sink.SpanCount()) + dropped; got != spans {
		t.Errorf("%d spans arrived and %d were counted dropped, want %d in all", sink.SpanCount(), dropped, spans)
	}
}
