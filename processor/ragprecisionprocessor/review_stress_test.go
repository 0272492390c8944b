package ragprecisionprocessor

import (
	"context"
	"errors"
	"fmt"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
)

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

var stressChunks = []string{"Paris is in France.", "Berlin is in Germany.", "Paris again.", "Rome is in Italy.", "Madrid."}

// runProcessorChaos sends many batches concurrently: retrieval spans with a
// reference, spans that wait for their trace's answer (whose root comes in
// a later batch, or never), repeated chunks (cache and in-flight hits), and
// batches the next consumer refuses; the judge is slow and fails at random,
// and max_wait is short. Every span of an accepted batch must arrive exactly
// once, none of a refused batch, and nothing may stay held. With
// shutdownEarly, Shutdown comes as soon as the last batch is in, with a
// short shutdown_timeout; what could not be forwarded must then be counted
// as dropped.
func runProcessorChaos(t *testing.T, seed uint64, shutdownEarly bool) {
	var srvRng = rand.New(rand.NewPCG(seed, 1))
	var srvMu sync.Mutex
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		srvMu.Lock()
		x, d := srvRng.Float64(), time.Duration(srvRng.IntN(8))*time.Millisecond
		srvMu.Unlock()
		if x < 0.15 {
			return chattest.Reply{Status: http.StatusInternalServerError, Delay: d, Header: map[string]string{"Retry-After": "0.001"}}
		}
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = d
		return rep
	})
	sink := &refusingSink{rng: rand.New(rand.NewPCG(seed, 2))}
	h := newHarnessNext(t, sink, &sink.TracesSink, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxConcurrency = 3
		c.Judge.MaxRetries = 0
		c.Cache.Size = 3
		setMaxWait(c, 40*time.Millisecond)
		c.Judge.ClientConfig.Timeout = 20 * time.Millisecond
		c.TraceJoin.Enabled = true
		c.TraceJoin.Wait = 15 * time.Millisecond
		c.MaxPendingSpans = 300
		if shutdownEarly {
			c.ShutdownTimeout = 30 * time.Millisecond
		}
	})

	var mu sync.Mutex
	want := map[string]bool{}    // spans of accepted batches
	refused := map[string]bool{} // spans of refused batches
	var gwg sync.WaitGroup
	for g := range 4 {
		gwg.Add(1)
		go func() {
			defer gwg.Done()
			rng := rand.New(rand.NewPCG(seed, 10+uint64(g)))
			var roots []pcommon.TraceID // traces whose root is still to come
			for i := range 40 {
				b := newBatch("svc")
				var names []string
				for k := range 1 + rng.IntN(4) {
					name := fmt.Sprintf("r-%d-%d-%d", g, i, k)
					chunks := []string{stressChunks[rng.IntN(len(stressChunks))], stressChunks[rng.IntN(len(stressChunks))]}
					switch rng.IntN(3) {
					case 0: // needs its trace's answer
						tid := traceID()
						s := b.add(name, tid)
						sl := s.Attributes().PutEmptySlice("rag.chunks")
						for _, c := range chunks {
							sl.AppendEmpty().SetStr(c)
						}
						s.Attributes().PutStr("rag.query", "Capital of France?")
						if rng.IntN(3) > 0 {
							roots = append(roots, tid)
						}
					default:
						b.project(name, "Capital of France?", "Paris", chunks...)
					}
					names = append(names, name)
				}
				for len(roots) > 0 && rng.IntN(2) == 0 {
					tid := roots[0]
					roots = roots[1:]
					name := fmt.Sprintf("root-%d-%d-%d", g, i, len(roots))
					s := b.add(name, tid)
					s.SetParentSpanID(pcommon.SpanID{})
					s.Attributes().PutStr("output.value", "Paris")
					names = append(names, name)
				}
				refuse := rng.IntN(8) == 0
				if refuse {
					b.plain("refuse")
				}
				err := h.p.ConsumeTraces(context.Background(), b.td)
				mu.Lock()
				for _, n := range names {
					if refuse {
						refused[n] = true
					} else {
						want[n] = true
					}
				}
				mu.Unlock()
				if (err != nil) != refuse {
					t.Errorf("batch %d-%d: err %v, refused %v", g, i, err, refuse)
				}
				if rng.IntN(3) == 0 {
					time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				}
			}
		}()
	}
	gwg.Wait()
	if !shutdownEarly {
		deadline := time.Now().Add(10 * time.Second)
		for {
			h.p.mu.Lock()
			held := h.p.held
			h.p.mu.Unlock()
			if held == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d spans still held long after max_wait", held)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := h.p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.p.mu.Lock()
	held := h.p.held
	h.p.mu.Unlock()
	if held != 0 {
		time.Sleep(500 * time.Millisecond)
		h.p.mu.Lock()
		later := h.p.held
		h.p.mu.Unlock()
		select {
		case <-h.p.fwd.exited:
			t.Logf("forwarder exited")
		default:
			t.Logf("forwarder still running")
		}
		t.Fatalf("%d spans still held after Shutdown (%d half a second later), abandoned %v, dropped %d",
			held, later, h.p.abandoned.Load(), counterValue(t, h.tel, metricDropped, nil))
	}
	seen := map[string]int{}
	statuses := map[string]int{}
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			seen[s.Name()]++
			statuses[attrStr(s, ragattr.Status)+"/"+attrStr(s, ragattr.Reason)]++
		})
	}
	dropped := counterValue(t, h.tel, metricDropped, nil)
	missing := 0
	for n := range want {
		switch seen[n] {
		case 0:
			missing++
		case 1:
		default:
			t.Errorf("span %s arrived %d times", n, seen[n])
		}
	}
	for n := range refused {
		if seen[n] > 0 {
			t.Errorf("span %s of a refused batch arrived", n)
		}
	}
	t.Logf("%d spans sent in accepted batches, %d in refused ones; %d missing, %d dropped; statuses %v",
		len(want), len(refused), missing, dropped, statuses)
	if int64(missing) != dropped {
		t.Errorf("%d spans never arrived, %d counted as dropped", missing, dropped)
	}
}

func TestProcessorChaos(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runProcessorChaos(t, seed, false) })
	}
}

func TestProcessorChaosShutdownEarly(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runProcessorChaos(t, seed, true) })
	}
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

// answerMemory keeps m.bytes equal to the bytes of the answers it holds, so
// that trace_join.max_bytes bounds them. An answer larger than the whole
// memory, for a trace it already holds, removes the entry; the eviction
// callback then subtracts the entry's new size (with the large answer),
// not the size that was counted.
func TestAnswerMemoryBytesAfterOversizedAnswer(t *testing.T) {
	m := newAnswerMemory(10, 100, time.Hour, func(int64) {})
	now := time.Now()
	var id pcommon.TraceID
	id[0] = 1
	m.record(id, "an LLM answer", false, 1, now)
	m.record(id, string(make([]byte, 200)), true, 2, now) // root answer over max_bytes
	var held int64
	for _, k := range m.lru.Keys() {
		a, _ := m.lru.Peek(k)
		held += a.bytes
	}
	if m.bytes != held {
		t.Fatalf("m.bytes %d, but the answers held weigh %d", m.bytes, held)
	}
}
