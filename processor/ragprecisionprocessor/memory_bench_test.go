package ragprecisionprocessor

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
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
// size: the target is at most 2 KB of heap. Heap is measured, not
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
