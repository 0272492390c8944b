package ragprecisionprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// heldMemory holds n selected spans of 5 chunks of 1 KB behind an LLM judge
// that answers nothing, and returns the Go heap and the RSS they cost per
// span, and their encoded size.
func heldMemory(tb testing.TB, n int) (heapPerSpan, rssPerSpan, encodedPerSpan float64) {
	h, bj := newBlockedHarness(tb, func(c *config.Config) {
		c.MaxPendingSpans = n
		c.MaxPendingBytes = 1 << 40
		c.Judge.MaxConcurrency = 8
		c.Cache.Size = 0
		setMaxWait(c, time.Hour)
	})
	chunk := strings.Repeat("lorem ipsum dolor sit amet ", 38)[:1000]
	build := func(round int) ptrace.Traces {
		b := newBatch("svc")
		for i := range 100 {
			id := strconv.Itoa(round*100 + i)
			b.project("retrieve", "What is the capital of France?", "Paris",
				id+"a "+chunk, id+"b "+chunk, id+"c "+chunk, id+"d "+chunk, id+"e "+chunk)
		}
		return b.td
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := rss()
	// The batches are what a receiver would hand over; what they leave
	// behind once their spans are held is counted as the spans' cost.
	batches := make([]ptrace.Traces, n/100)
	var encoded int
	for r := range batches {
		batches[r] = build(r)
		encoded += sizer.TracesSize(batches[r])
	}
	for _, td := range batches {
		if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
			tb.Fatal(err)
		}
	}
	if h.p.held != n {
		tb.Fatalf("%d spans held, want %d", h.p.held, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	rssAfter := rss()
	if path := os.Getenv("RAGPRECISION_HEAP_PROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	runtime.KeepAlive(batches)
	// End the judgements at once: every span goes on, with status
	// shutdown, before the processor itself is shut down.
	if err := h.p.engine.Close(); err != nil {
		tb.Fatal(err)
	}
	h.waitSpans(n)
	bj.open()
	return heap / float64(n), float64(rssAfter-rssBefore) / float64(n), float64(encoded) / float64(n)
}

// rss is the process's resident set size in bytes, from /proc/self/statm.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestHeldSpanMemory bounds what a held span costs beyond its own encoded
// size: at most 2 KB of heap (docs/BENCHMARKS.md). Heap is measured, not
// timed, so the bound is stable.
func TestHeldSpanMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("holds 5,000 spans; the race detector's memory would blur the figure")
	}
	heap, rssPer, encoded := heldMemory(t, 5000)
	t.Logf("per held span: %.0f B of heap, %.0f B of RSS, %.0f B encoded (heap overhead %.0f B)", heap, rssPer, encoded, heap-encoded)
	if heap > encoded+2048 {
		t.Errorf("a held span costs %.0f B of heap for %.0f B encoded: more than 2 KB over", heap, encoded)
	}
}

// BenchmarkHeldSpanMemory reports the memory of 5,000 held spans, per span.
func BenchmarkHeldSpanMemory(b *testing.B) {
	for range b.N {
		heap, rssPer, encoded := heldMemory(b, 5000)
		b.ReportMetric(heap, "heap-B/span")
		b.ReportMetric(rssPer, "rss-B/span")
		b.ReportMetric(encoded, "encoded-B/span")
		b.ReportMetric(heap-encoded, "overhead-B/span")
	}
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

func TestStatusTimeout(t *testing.T) {
	h, _ := newBlockedHarness(t, func(c *config.Config) { setMaxWait(c, 100*time.Millisecond) })
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	start := time.Now()
	h.consume(b.td)
	h.waitSpans(1)
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("held for %s, less than max_wait", waited)
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusTimeout)
}

func TestStatusOverflow(t *testing.T) {
	h, bj := newBlockedHarness(t, func(c *config.Config) { c.MaxPendingSpans = 1 })
	b := newBatch("svc")
	b.project("held", "q", "Paris", capitalChunks...)
	b.project("overflowed", "q", "Paris", capitalChunks...)
	b.plain("other")
	h.consume(b.td)
	if h.sink.SpanCount() != 2 {
		t.Fatalf("%d spans forwarded synchronously, want 2", h.sink.SpanCount())
	}
	expectStatus(t, h.span("overflowed"), ragattr.StatusOverflow)
	bj.open()
	h.waitSpans(3)
	if got := attrStr(h.span("held"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("held span: %q", got)
	}
}

// Max_pending_bytes bounds held memory whatever max_pending_spans allows;
// a span refused for it goes on in its batch, whole.
func TestOverflowOnPendingBytes(t *testing.T) {
	h, bj := newBlockedHarness(t, func(c *config.Config) { c.MaxPendingBytes = 1500 })
	b := newBatch("svc")
	b.project("small", "q", "Paris", "Paris is the capital of France.")
	big := b.project("big", "q", "Paris", strings.Repeat("Paris ", 200))
	want := ptrace.NewSpan()
	big.CopyTo(want)
	h.consume(b.td)
	if h.sink.SpanCount() != 1 {
		t.Fatalf("%d spans forwarded synchronously, want the big one", h.sink.SpanCount())
	}
	got := h.span("big")
	expectStatus(t, got, ragattr.StatusOverflow)
	if r := attrStr(got, ragattr.Reason); r != reasonPendingBytes {
		t.Errorf("reason %q, want %s", r, reasonPendingBytes)
	}
	got.Attributes().Remove(ragattr.Status)
	got.Attributes().Remove(ragattr.Reason)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the span refused for its size changed on its way back into the batch")
	}
	bj.open()
	h.waitSpans(2)
}
