package ragprecisionprocessor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// statusHost records the component status the processor reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []componentstatus.Status
	for _, e := range h.events {
		out = append(out, e.Status())
	}
	return out
}

func nopHost() component.Host { return hostWithExtensions{} }

type hostWithExtensions struct {
	ext map[component.ID]component.Component
}

func (h hostWithExtensions) GetExtensions() map[component.ID]component.Component { return h.ext }

// harness is a processor wired to a sink and a real metrics SDK reader.
type harness struct {
	t    testing.TB
	p    *ragProcessor
	sink *consumertest.TracesSink
	tel  *componenttest.Telemetry
}

func newHarness(t testing.TB, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	return newHarnessWithSink(t, new(consumertest.TracesSink), mutate, opts...)
}

func newHarnessWithSink(t testing.TB, sink *consumertest.TracesSink, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	return newHarnessFull(t, sink, nil, nil, mutate, opts...)
}

// newHarnessLogged is newHarness with the processor logging to logger.
func newHarnessLogged(t testing.TB, logger *zap.Logger, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	return newHarnessFull(t, new(consumertest.TracesSink), logger, nil, mutate, opts...)
}

// newHarnessFull is newHarness with every part given: a nil logger or host
// means the defaults.
func newHarnessFull(t testing.TB, sink *consumertest.TracesSink, logger *zap.Logger, host component.Host, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	return newHarnessAll(t, sink, sink, logger, host, mutate, opts...)
}

// newHarnessNext is newHarness with a next consumer of its own, which
// records into sink (a wrapper around it that fails or blocks).
func newHarnessNext(t testing.TB, next consumer.Traces, sink *consumertest.TracesSink, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	return newHarnessAll(t, next, sink, nil, nil, mutate, opts...)
}

func newHarnessAll(t testing.TB, next consumer.Traces, sink *consumertest.TracesSink, logger *zap.Logger, host component.Host, mutate func(*config.Config), opts ...judge.Option) *harness {
	t.Helper()
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config invalid: %v", err)
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	if logger != nil {
		set.TelemetrySettings.Logger = logger
	}
	p, err := newProcessor(set.TelemetrySettings, cfg, next, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if host == nil {
		host = componenttest.NewNopHost()
	}
	if err := p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, p: p, sink: sink, tel: tel}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return h
}

func (h *harness) consume(td ptrace.Traces) {
	h.t.Helper()
	if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
		h.t.Fatalf("ConsumeTraces: %v", err)
	}
}

// waitSpans waits until the sink holds n spans.
func (h *harness) waitSpans(n int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.sink.SpanCount() < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("sink has %d spans, want %d", h.sink.SpanCount(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// shutdown shuts the processor down and checks that nothing is held.
func (h *harness) shutdown(ctx context.Context) {
	h.t.Helper()
	if err := h.p.Shutdown(ctx); err != nil {
		h.t.Fatal(err)
	}
	if h.p.held != 0 {
		h.t.Fatalf("%d spans still held after Shutdown", h.p.held)
	}
}

// joins is the number of traces whose answer held spans wait for.
func (h *harness) joins() int {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	return len(h.p.joins)
}

// spansByName indexes every span the sink received by name.
func (h *harness) spansByName() map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, td := range h.sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { out[s.Name()] = s })
	}
	return out
}

func (h *harness) span(name string) ptrace.Span {
	h.t.Helper()
	s, ok := h.spansByName()[name]
	if !ok {
		h.t.Fatalf("span %q not received", name)
	}
	return s
}

// batch builds ptrace.Traces for one service.
type batch struct {
	td ptrace.Traces
	ss ptrace.ScopeSpans
}

func newBatch(service string) *batch {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test-instrumentation")
	return &batch{td: td, ss: ss}
}

var idCounter atomic.Uint64

// traceID returns a fresh trace ID whose randomness is spread over the
// 56-bit space, as real trace IDs are.
func traceID() pcommon.TraceID {
	var id pcommon.TraceID
	n := idCounter.Add(1)
	binary.BigEndian.PutUint64(id[0:8], n)
	binary.BigEndian.PutUint64(id[8:16], n*0x9E3779B97F4A7C15)
	return id
}

func spanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], idCounter.Add(1)*0xBF58476D1CE4E5B9)
	return id
}

// add appends a span in trace tid (a new trace when tid is empty).
func (b *batch) add(name string, tid pcommon.TraceID) ptrace.Span {
	s := b.ss.Spans().AppendEmpty()
	s.SetName(name)
	if tid.IsEmpty() {
		tid = traceID()
	}
	s.SetTraceID(tid)
	s.SetSpanID(spanID())
	s.SetParentSpanID(spanID())
	now := time.Now()
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	return s
}

// plain appends a span no reader recognises.
func (b *batch) plain(name string) ptrace.Span {
	s := b.add(name, pcommon.TraceID{})
	s.Attributes().PutStr("http.route", "/ask")
	return s
}

// httpServer appends a plain span with an HTTP server span's attributes:
// the traffic the benchmarks' batches are mostly made of.
func (b *batch) httpServer(name string) ptrace.Span {
	s := b.plain(name)
	a := s.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("url.path", "/items")
	a.PutStr("server.address", "shop.internal")
	a.PutStr("user_agent.original", "Mozilla/5.0")
	a.PutStr("network.protocol.version", "1.1")
	a.PutDouble("app.cart.total", 42.5)
	return s
}

// project appends a retrieval span in the project's rag.* keys.
func (b *batch) project(name, query, reference string, chunks ...string) ptrace.Span {
	s := b.add(name, pcommon.TraceID{})
	if query != "" {
		s.Attributes().PutStr("rag.query", query)
	}
	if reference != "" {
		s.Attributes().PutStr("rag.reference", reference)
	}
	sl := s.Attributes().PutEmptySlice("rag.chunks")
	for _, c := range chunks {
		sl.AppendEmpty().SetStr(c)
	}
	return s
}

// capital is a retrieval whose relevant chunks contain "Paris".
var capitalChunks = []string{
	"Paris is the capital and largest city of France.",
	"Berlin is the capital of Germany.",
	"The Eiffel Tower is in Paris, the French capital.",
}

// blockingJudge is a Chat Completions handler that holds every request
// until released (or the client gives up), then answers like KeywordJudge.
type blockingJudge struct {
	release chan struct{}
	once    sync.Once
	word    string
	// asked counts the requests that reached it.
	asked atomic.Int64
}

func newBlockingJudge(word string) *blockingJudge {
	return &blockingJudge{release: make(chan struct{}), word: word}
}

func (b *blockingJudge) handle(n int, r chattest.Request) chattest.Reply {
	b.asked.Add(1)
	<-b.release
	return chattest.KeywordJudge(b.word)(n, r)
}

func (b *blockingJudge) open() { b.once.Do(func() { close(b.release) }) }

// waitRequests waits until n requests have reached the judge.
func (b *blockingJudge) waitRequests(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.asked.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests reached the judge, want %d", b.asked.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// newBlockedHarness runs the processor with an LLM judge that holds every
// request until bj.open() (at the latest when the test ends, before the
// processor is shut down).
func newBlockedHarness(t testing.TB, mutate func(*config.Config)) (h *harness, bj *blockingJudge) {
	t.Helper()
	sink := new(consumertest.TracesSink)
	return newBlockedHarnessNext(t, sink, sink, mutate)
}

// newBlockedHarnessNext is newBlockedHarness with a next consumer of its
// own (see newHarnessNext).
func newBlockedHarnessNext(t testing.TB, next consumer.Traces, sink *consumertest.TracesSink, mutate func(*config.Config)) (h *harness, bj *blockingJudge) {
	t.Helper()
	bj = newBlockingJudge("Paris")
	srv := chatServer(t, bj.handle)
	h = newHarnessNext(t, next, sink, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		if mutate != nil {
			mutate(c)
		}
	})
	t.Cleanup(bj.open)
	return h, bj
}

// setMaxWait sets max_wait, and a judge.timeout that fits in it.
func setMaxWait(c *config.Config, d time.Duration) {
	c.MaxWait = d
	c.Judge.ClientConfig.Timeout = min(c.Judge.ClientConfig.Timeout, d)
}

// llmJudge points a config at a local Chat Completions server.
func llmJudge(url string) func(*config.Config) {
	return func(c *config.Config) {
		c.Judge.Model, _ = config.ParseModel("openai:judge-model")
		c.Judge.BaseURL = url
		c.Judge.APIKey = "sk-test"
		c.Judge.MaxRetries = 0
		c.Judge.MaxRequestsPerSecond = 0
	}
}

func chatServer(t testing.TB, h chattest.Handler) *chattest.Server {
	t.Helper()
	s := chattest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func attrStr(s ptrace.Span, key string) string {
	v, ok := s.Attributes().Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// stoppedClock is a judge clock at which time does not pass, so that a
// request budget never refills during a test.
type stoppedClock struct{}

var epoch = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func (stoppedClock) Now() time.Time { return epoch }

// AfterFunc waits in real time: backoffs still end, but the budget sees no
// time pass.
func (stoppedClock) AfterFunc(d time.Duration, f func()) judge.Timer { return time.AfterFunc(d, f) }

func processortestSettings() processor.Settings {
	return processortest.NewNopSettings(metadata.Type)
}

// configopaquePair is one header of judge.headers.
func configopaquePair(name, value string) configopaque.Pair {
	return configopaque.Pair{Name: name, Value: configopaque.String(value)}
}

// jsonString is s as a JSON string literal's content.
func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return string(b[1 : len(b)-1]), nil
}
