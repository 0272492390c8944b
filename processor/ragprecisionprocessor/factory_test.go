package ragprecisionprocessor

import (
	"context"
	"fmt"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"math"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/passbench"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "ragprecision" {
		t.Fatalf("type %q", f.Type())
	}
	if f.TracesStability() != metadata.TracesStability {
		t.Fatalf("stability %v", f.TracesStability())
	}
	cfg := f.CreateDefaultConfig()
	if !reflect.DeepEqual(cfg, config.Default()) {
		t.Fatalf("default config %+v", cfg)
	}
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().MutatesData {
		t.Fatal("the processor annotates spans: MutatesData must be true")
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop()); err == nil {
		t.Fatal("metrics are not supported")
	}
}

func TestVerifyShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), NewFactory().CreateDefaultConfig())
}

// Shutdown must also forward what it holds when the factory's own path is
// used with retrieval spans, as processortest does with plain ones.
func TestShutdownForwardsHeldSpansThroughFactory(t *testing.T) {
	f := NewFactory()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		b := newBatch("svc")
		b.project(fmt.Sprintf("r%d", i), question, "Paris", capitalChunks...)
		b.plain(fmt.Sprintf("p%d", i))
		if err := p.ConsumeTraces(context.Background(), b.td); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.SpanCount() != 100 {
		t.Fatalf("%d spans after Shutdown, want 100", sink.SpanCount())
	}
}

// Non-candidate spans, and candidates that are not selected, are passed on
// unchanged, in the same call, in the same batch.
func TestPassThroughIsUntouched(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.SamplingPercentage = 0 })
	b := newBatch("svc")
	b.plain("plain")
	b.project("candidate", question, "Paris", capitalChunks...)
	want := ptrace.NewTraces()
	b.td.CopyTo(want)
	h.consume(b.td)
	all := h.sink.AllTraces()
	if len(all) != 1 || !reflect.DeepEqual(all[0], want) {
		t.Fatal("the batch changed on its way through")
	}
	if got := counterValue(t, h.tel, metricCandidates, nil); got != 1 {
		t.Fatalf("candidates %d", got)
	}
	if got := counterValue(t, h.tel, metricSelected, nil); got != 0 {
		t.Fatalf("selected %d", got)
	}
}

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

// A batch whose every span is held produces no empty forward.
func TestFullyHeldBatchIsNotForwardedEmpty(t *testing.T) {
	h, _ := newBlockedHarness(t, nil)
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	if n := len(h.sink.AllTraces()); n != 0 {
		t.Fatalf("%d forwards of an emptied batch", n)
	}
}

func TestSamplingIsConsistentPerTrace(t *testing.T) {
	const traces = 400
	tids := make([]pcommon.TraceID, traces)
	for i := range tids {
		tids[i] = traceID()
	}
	run := func(pct float64) map[pcommon.TraceID]bool {
		h := newHarness(t, func(c *config.Config) { c.SamplingPercentage = pct })
		selected := map[pcommon.TraceID]bool{}
		b := newBatch("svc")
		for _, tid := range tids {
			for j := range 2 {
				s := b.add(fmt.Sprintf("%s-%d", tid, j), tid)
				s.Attributes().PutStr("rag.reference", "Paris")
				s.Attributes().PutEmptySlice("rag.chunks").AppendEmpty().SetStr("Paris is in France")
			}
		}
		h.consume(b.td)
		h.shutdown(context.Background())
		decisions := map[pcommon.TraceID][]bool{}
		for _, s := range h.spansByName() {
			_, scored := s.Attributes().Get(ragattr.Status)
			decisions[s.TraceID()] = append(decisions[s.TraceID()], scored)
			if scored {
				if v, _ := s.Attributes().Get(ragattr.SampleRate); math.Abs(v.Double()-pct/100) > 1e-9 {
					t.Fatalf("sample_rate %v at %v%%", v.Double(), pct)
				}
			}
		}
		for tid, d := range decisions {
			if len(d) != 2 || d[0] != d[1] {
				t.Fatalf("trace %s: decisions %v differ between its spans", tid, d)
			}
			selected[tid] = d[0]
		}
		return selected
	}
	at25 := run(25)
	at25again := run(25) // another replica
	at50 := run(50)
	n25, n50 := 0, 0
	for tid, in := range at25 {
		if at25again[tid] != in {
			t.Fatalf("trace %s: replicas disagree", tid)
		}
		if in {
			n25++
			if !at50[tid] {
				t.Fatalf("trace %s selected at 25%% but not at 50%%", tid)
			}
		}
	}
	for _, in := range at50 {
		if in {
			n50++
		}
	}
	// Binomial(400, p): 4 standard deviations either side.
	if n25 < 100-35 || n25 > 100+35 || n50 < 200-40 || n50 > 200+40 {
		t.Fatalf("selected %d at 25%%, %d at 50%% of %d traces", n25, n50, traces)
	}
}

// The explicit randomness of OTEP 235 (tracestate ot=rv) decides when
// present.
func TestSamplingHonoursTracestateRandomness(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.SamplingPercentage = 50 })
	b := newBatch("svc")
	low := b.project("low", question, "Paris", "Paris")
	low.TraceState().FromRaw("ot=rv:00000000000001")
	high := b.project("high", question, "Paris", "Paris")
	high.TraceState().FromRaw("ot=rv:ffffffffffffff")
	h.consume(b.td)
	h.shutdown(context.Background())
	if _, ok := h.span("low").Attributes().Get(ragattr.Status); ok {
		t.Fatal("rv near 0 is below a 50% threshold")
	}
	if got := attrStr(h.span("high"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("rv near 1: %q", got)
	}
}

const passThroughSpans = 100

// passThroughBatch is a batch of passThroughSpans plain spans with 8
// attributes and a short JSON traceloop.entity.output (which the OpenLLMetry
// reader must look into), every tenth of them a retrieval span when
// candidates is set.
func passThroughBatch(candidates bool) ptrace.Traces {
	td := plainBatch(candidates)
	forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
		if _, ok := s.Attributes().Get("http.request.method"); ok {
			s.Attributes().PutStr("traceloop.entity.output", `{"result": "ok", "items": [1, 2, 3]}`)
		}
	})
	return td
}

// plainBatch is passThroughBatch without the entity outputs: HTTP server
// spans that no dialect watches, what most of a collector's traffic is.
func plainBatch(candidates bool) ptrace.Traces {
	bt := newBatch("checkout")
	for i := range passThroughSpans {
		if candidates && i%10 == 0 {
			bt.project("retrieve", "q", "Paris", "Paris is the capital of France.")
			continue
		}
		bt.httpServer(fmt.Sprintf("GET /items/%d", i))
	}
	return bt.td
}

// passThroughProcessor is a processor at the given sampling percentage,
// not started: the batches it is given must select nothing for the judge.
func passThroughProcessor(tb testing.TB, percentage float64) *ragProcessor {
	cfg := config.Default()
	cfg.SamplingPercentage = percentage
	p, err := newProcessor(componenttest.NewNopTelemetrySettings(), cfg, consumertest.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// Spans that are not candidates, and candidates not selected, pass through
// without an allocation: what the processor keeps of a batch (the candidate
// counts, their metric attributes) is on the stack or built once.
func TestPassThroughDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, candidates := range []bool{false, true} {
		p := passThroughProcessor(t, 0)
		td := passThroughBatch(candidates)
		_ = p.ConsumeTraces(context.Background(), td) // builds the series' attribute sets
		if allocs := testing.AllocsPerRun(100, func() { _ = p.ConsumeTraces(context.Background(), td) }); allocs != 0 {
			t.Errorf("candidates %v: %v allocations per batch", candidates, allocs)
		}
	}
	// At a sampling rate between 0 and 100% the decision reads the trace's
	// randomness, here of candidates outside the sample whose tracestate
	// holds other vendors' entries.
	p := passThroughProcessor(t, 50)
	td := passThroughBatch(true)
	forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
		s.SetTraceID(pcommon.TraceID{15: 1}) // randomness near 0
		s.TraceState().FromRaw("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
		if p.sampler.selected(s) {
			t.Fatal("a span is selected")
		}
	})
	if allocs := testing.AllocsPerRun(100, func() { _ = p.ConsumeTraces(context.Background(), td) }); allocs != 0 {
		t.Errorf("sampling 50%%, vendors' tracestate: %v allocations per batch", allocs)
	}
}

// BenchmarkPassThrough measures what the processor adds to spans that are
// not retrieval spans: each batch is handed straight to the next consumer
// (noop), walked with each of passbench's baselines (keys, walk, read), and
// given to the processor, interleaved batch by batch. The worst case is
// every span with a JSON traceloop.entity.output to look at; plain spans
// have nothing any dialect watches. Report:
//
//	go test -run '^$' -bench PassThrough -benchmem ./processor/ragprecisionprocessor/
func BenchmarkPassThrough(b *testing.B) {
	walkAll := func(td ptrace.Traces, per func(ptrace.Span) int) func() {
		return func() {
			n := 0
			forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { n += per(s) })
			passbench.Sink += n
		}
	}
	for _, c := range []struct {
		name     string
		td       ptrace.Traces
		sampling float64
	}{
		{"worst case", passThroughBatch(false), 100},
		{"plain spans", plainBatch(false), 100},
		// A tenth of the spans are retrieval spans that sampling leaves
		// out: they are counted, and otherwise pass like the rest.
		{"candidates not selected", passThroughBatch(true), 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := passThroughProcessor(b, c.sampling)
			next := consumertest.NewNop()
			ctx := context.Background()
			b.ReportAllocs()
			passbench.Interleaved(b, c.td.SpanCount(), []string{"noop", "keys", "walk", "read", "ragprecision"},
				func() { _ = next.ConsumeTraces(ctx, c.td) },
				walkAll(c.td, passbench.Keys), walkAll(c.td, passbench.Walk), walkAll(c.td, passbench.Read),
				func() { _ = p.ConsumeTraces(ctx, c.td) })
		})
	}
}

// In a batch where some spans are held, every other span — plain, or a
// candidate not selected — reaches the next consumer unchanged and at once,
// and empty scopes and resources that came in stay.
func TestOthersUntouchedWhileSomeAreHeld(t *testing.T) {
	h, bj := newBlockedHarness(t, func(c *config.Config) { c.SamplingPercentage = 50 })
	b := newBatch("svc")
	for i := range 40 {
		b.project(fmt.Sprintf("r%d", i), question, "Paris", capitalChunks...)
		b.plain(fmt.Sprintf("p%d", i))
	}
	b.td.ResourceSpans().At(0).ScopeSpans().AppendEmpty().Scope().SetName("empty-scope")
	b.td.ResourceSpans().AppendEmpty().Resource().Attributes().PutStr("service.name", "no-scopes")
	before := map[string]ptrace.Span{}
	forEachSpan(b.td, func(_ pcommon.Resource, s ptrace.Span) {
		c := ptrace.NewSpan()
		s.CopyTo(c)
		before[s.Name()] = c
	})
	h.consume(b.td)

	all := h.sink.AllTraces()
	if len(all) != 1 {
		t.Fatalf("%d synchronous forwards", len(all))
	}
	forEachSpan(all[0], func(_ pcommon.Resource, s ptrace.Span) {
		if !reflect.DeepEqual(s, before[s.Name()]) {
			t.Errorf("span %s changed", s.Name())
		}
	})
	held := 80 - all[0].SpanCount()
	if held < 5 || held > 35 {
		t.Fatalf("%d of 40 retrievals held at 50%%", held)
	}
	rss := all[0].ResourceSpans()
	if rss.Len() != 2 || rss.At(0).ScopeSpans().Len() != 2 || rss.At(0).ScopeSpans().At(1).Scope().Name() != "empty-scope" {
		t.Fatal("empty scopes or resources that came in were removed")
	}
	bj.open()
	h.waitSpans(80)
}

// Every status and outcome series exists from the start.
func TestZeroSeriesExistAtStart(t *testing.T) {
	h := newHarness(t, nil)
	m, err := h.tel.GetMetric(metricUnscored)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Data.(metricdata.Sum[int64]).DataPoints); n != len(ragattr.UnscoredStatuses) {
		t.Fatalf("%d unscored series at start, want %d", n, len(ragattr.UnscoredStatuses))
	}
	m, err = h.tel.GetMetric(metricRequests)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Data.(metricdata.Sum[int64]).DataPoints); n != len(judge.Outcomes) {
		t.Fatalf("%d judge request series at start, want %d", n, len(judge.Outcomes))
	}
}
