package ragprecisionprocessor

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// A cascade in the collector: builtin:lexical decides what it is sure of,
// the LLM the rest; the span's explanation and the verdicts_total metric
// say which stage decided what.
func TestCascadeStagesOnSpansAndMetrics(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Leonardo"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.Model, _ = config.ParseModel("cascade:openai:judge-model")
		c.Judge.Cascade.MinConfidence = 0.5
	})
	b := newBatch("svc")
	b.project("retrieve", "Who painted the Mona Lisa?", "Leonardo da Vinci",
		"The Mona Lisa was painted by Leonardo da Vinci in the early 16th century.",
		"Bananas are rich in potassium.",
		"The Louvre in Paris holds many paintings.",
		"Leonardo da Vinci was born in Vinci, Tuscany.")
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if attrStr(s, ragattr.Status) != ragattr.StatusScored || attrStr(s, ragattr.Judge) != "cascade:openai:judge-model" {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	expl, _ := s.Events().At(0).Attributes().Get(ragattr.EvaluationExplanation)
	if !strings.Contains(expl.Str(), "by builtin:lexical") || !strings.Contains(expl.Str(), "by openai:judge-model") {
		t.Fatalf("explanation does not say which stage decided what: %q", expl.Str())
	}
	lexical := counterValue(t, h.tel, metricVerdicts, map[string]string{labelStage: "builtin:lexical"})
	llm := counterValue(t, h.tel, metricVerdicts, map[string]string{labelStage: "openai:judge-model"})
	if lexical == 0 || llm == 0 || lexical+llm != 4 || llm != srv.Calls() {
		t.Fatalf("verdicts by stage: lexical %d, llm %d (LLM calls %d)", lexical, llm, srv.Calls())
	}
}

// Builtin:lexical says at start-up that it ignores judge.criteria.
func TestBuiltinSaysItIgnoresCriteria(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	newHarnessLogged(t, zap.New(core), func(c *config.Config) { c.Judge.Criteria = "must state the policy number" })
	if logs.FilterMessageSnippet("cannot read criteria").Len() != 1 {
		t.Fatalf("no start-up line says the criteria are ignored: %v", logs.All())
	}
}

const (
	question = "What is the capital of France?"
	answer   = "The capital of France is Paris."
)

var dialectChunks = []string{
	"Paris is the capital and most populous city of France.",
	"Bananas are an excellent source of potassium and fibre.",
	"France's capital, Paris, sits on the Seine.",
}

func joinConfig(c *config.Config) {
	c.TraceJoin.Enabled = true
	c.TraceJoin.Wait = 150 * time.Millisecond
}

// rootJoinConfig waits for the trace's answer far longer than any test
// runs: only the root span's arrival can end the wait, so a test that sees
// the span scored has shown that it did, without timing anything.
func rootJoinConfig(c *config.Config) {
	c.TraceJoin.Enabled = true
	c.TraceJoin.Wait = time.Hour
	c.MaxWait = 2 * time.Hour
}

// newDialectHarness runs the processor with a keyword judge.
func newDialectHarness(t *testing.T, mutate func(*config.Config)) (*harness, *chattest.Server) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	return newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		if mutate != nil {
			mutate(c)
		}
	}), srv
}

// rootSpan appends the trace's root span.
func rootSpan(b *batch, tid pcommon.TraceID, name string) ptrace.Span {
	s := b.add(name, tid)
	s.SetParentSpanID(pcommon.SpanID{})
	return s
}

func expectScored(t *testing.T, h *harness, name, refSource string, want float64) {
	t.Helper()
	s := h.span(name)
	if got := attrStr(s, ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("%s: status %q (attributes %v)", name, got, s.Attributes().AsRaw())
	}
	v, _ := s.Attributes().Get(ragattr.Precision)
	if d := v.Double() - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("%s: CP %v, want %v (verdicts %s)", name, v.Double(), want, attrStr(s, ragattr.Verdicts))
	}
	if got := attrStr(s, ragattr.ReferenceSource); got != refSource {
		t.Errorf("%s: reference_source %q, want %q", name, got, refSource)
	}
}

func TestDialectProject(t *testing.T) {
	h, _ := newDialectHarness(t, nil)
	b := newBatch("svc")
	s := b.project("rag.retrieve", question, "", dialectChunks...)
	s.Attributes().PutStr("rag.answer", answer)
	h.consume(b.td)
	h.waitSpans(1)
	expectScored(t, h, "rag.retrieve", "answer", 5.0/6.0)
}

// OpenTelemetry GenAI: a retrieval span with documents as an array of maps,
// and one with documents as a JSON string; the answer comes from the chat
// span of the trace.
func TestDialectGenAI(t *testing.T) {
	h, _ := newDialectHarness(t, rootJoinConfig)
	b := newBatch("svc")
	tid := traceID()
	root := rootSpan(b, tid, "invoke_agent support-bot")
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	r := b.add("retrieval wiki", tid)
	r.SetKind(ptrace.SpanKindClient)
	r.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	r.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	r.Attributes().PutStr("gen_ai.retrieval.query.text", question)
	docs := r.Attributes().PutEmptySlice("gen_ai.retrieval.documents")
	for i, c := range dialectChunks {
		d := docs.AppendEmpty().SetEmptyMap()
		d.PutStr("id", string(rune('a'+i)))
		d.PutDouble("score", 0.9-float64(i)/10)
		d.PutStr("content", c)
	}
	r2 := b.add("retrieval wiki-json", tid)
	r2.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	r2.Attributes().PutStr("gen_ai.retrieval.query.text", question)
	r2.Attributes().PutStr("gen_ai.retrieval.documents",
		`[{"id":"a","score":0.9,"content":"`+dialectChunks[0]+`"},{"id":"b","text":"`+dialectChunks[1]+`"},{"id":"c","content":"`+dialectChunks[2]+`"}]`)
	chat := b.add("chat gpt-4o", tid)
	chat.Attributes().PutStr("gen_ai.operation.name", "chat")
	chat.Attributes().PutStr("gen_ai.output.messages",
		`[{"role":"assistant","parts":[{"type":"text","content":"`+answer+`"}],"finish_reason":"stop"}]`)
	h.consume(b.td)
	// The root arrived without an answer: the wait ends with it, and the
	// chat span's answer is used.
	h.waitSpans(4)
	expectScored(t, h, "retrieval wiki", "answer", 5.0/6.0)
	expectScored(t, h, "retrieval wiki-json", "answer", 5.0/6.0)
}

// OpenInference: RETRIEVER span with flattened documents (indices out of
// order in the attribute list), and the answer in the root CHAIN span's
// output.value arriving in a later batch.
func TestDialectOpenInference(t *testing.T) {
	h, _ := newDialectHarness(t, rootJoinConfig)
	tid := traceID()
	b := newBatch("svc")
	r := b.add("retrieve", tid)
	a := r.Attributes()
	a.PutStr("openinference.span.kind", "RETRIEVER")
	a.PutStr("input.value", question)
	for _, i := range []int{2, 0, 1} {
		p := "retrieval.documents." + string(rune('0'+i)) + ".document."
		a.PutStr(p+"id", "doc-"+string(rune('0'+i)))
		a.PutDouble(p+"score", 1/float64(i+1))
		a.PutStr(p+"content", dialectChunks[i])
	}
	h.consume(b.td)

	b = newBatch("svc")
	root := rootSpan(b, tid, "query")
	root.Attributes().PutStr("openinference.span.kind", "CHAIN")
	root.Attributes().PutStr("input.value", question)
	root.Attributes().PutStr("output.value", answer)
	h.consume(b.td)
	h.waitSpans(2) // the root's answer ends the wait
	expectScored(t, h, "retrieve", "answer", 5.0/6.0)
}

// OpenLLMetry: a vector-store query span with db.query.result events, and a
// LangChain retriever task span with documents in traceloop.entity.output.
func TestDialectOpenLLMetry(t *testing.T) {
	h, _ := newDialectHarness(t, func(c *config.Config) { c.ReferenceSources = []string{"reference", "answer", "query"} })
	b := newBatch("svc")
	q := b.add("chroma.query", pcommon.TraceID{})
	q.SetKind(ptrace.SpanKindClient)
	q.Attributes().PutStr("db.system", "chroma")
	q.Attributes().PutStr("db.query.text", question)
	for i, c := range dialectChunks {
		ev := q.Events().AppendEmpty()
		ev.SetName("db.query.result")
		ev.Attributes().PutStr("db.query.result.id", string(rune('a'+i)))
		ev.Attributes().PutDouble("db.query.result.distance", float64(i)/10)
		ev.Attributes().PutStr("db.query.result.document", c)
	}
	task := b.add("VectorStoreRetriever.task", pcommon.TraceID{})
	task.Attributes().PutStr("traceloop.span.kind", "task")
	task.Attributes().PutStr("traceloop.entity.name", "VectorStoreRetriever")
	task.Attributes().PutStr("traceloop.entity.input", `{"inputs": {"query": "`+question+`"}, "tags": [], "metadata": {}}`)
	task.Attributes().PutStr("traceloop.entity.output", `{"documents": [`+
		`{"page_content": "`+dialectChunks[0]+`", "metadata": {"source": "a"}},`+
		`{"page_content": "`+dialectChunks[1]+`", "metadata": {"source": "b"}},`+
		`{"page_content": "`+dialectChunks[2]+`", "metadata": {"source": "c"}}]}`)
	lc := b.add("Retriever.dumpd", pcommon.TraceID{})
	lc.Attributes().PutStr("traceloop.entity.input", `"`+question+`"`)
	lc.Attributes().PutStr("traceloop.entity.output", `{"outputs": [`+
		`{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"], "kwargs": {"page_content": "`+dialectChunks[0]+`"}},`+
		`{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"], "kwargs": {"page_content": "`+dialectChunks[1]+`"}},`+
		`{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"], "kwargs": {"page_content": "`+dialectChunks[2]+`"}}], "kwargs": {}}`)
	h.consume(b.td)
	h.waitSpans(3)
	for _, name := range []string{"chroma.query", "VectorStoreRetriever.task", "Retriever.dumpd"} {
		expectScored(t, h, name, "query", 5.0/6.0)
	}
}

// Explicit keys in attributes: override the dialects, on any span.
func TestDialectExplicitAttributes(t *testing.T) {
	h, srv := newDialectHarness(t, func(c *config.Config) {
		c.Attributes = config.Attributes{Query: "app.question", Answer: "app.answer", Reference: "app.expected", Chunks: "app.passages", DataSource: "app.index"}
	})
	b := newBatch("svc")
	s := b.add("search", pcommon.TraceID{})
	s.Attributes().PutStr("app.question", question)
	s.Attributes().PutStr("app.expected", answer)
	s.Attributes().PutStr("app.index", "faq")
	sl := s.Attributes().PutEmptySlice("app.passages")
	for _, c := range dialectChunks {
		sl.AppendEmpty().SetStr(c)
	}
	// A project-dialect span whose reference is overridden by app.expected.
	p := b.project("rag", question, "bananas", dialectChunks...)
	p.Attributes().PutStr("app.expected", answer)
	h.consume(b.td)
	h.waitSpans(2)
	expectScored(t, h, "search", "reference", 5.0/6.0)
	expectScored(t, h, "rag", "reference", 5.0/6.0)
	for _, r := range srv.Requests() {
		if r.Block("REFERENCE") != answer || r.Block("QUESTION") != question {
			t.Fatalf("judged against %q / %q, want the app.* attributes", r.Block("REFERENCE"), r.Block("QUESTION"))
		}
	}
	if got := attrStr(h.span("search"), "app.index"); got != "faq" {
		t.Fatal(got)
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

// A burst the judge cannot keep up with:
// 100 spans of 3 chunks at once, 4 slots, max_wait ten judge latencies.
// Before, the chunk requests of all spans interleaved on the slots: 36
// replies were paid for and no span was scored. Now spans are judged whole,
// earliest deadline first: nearly every reply paid for belongs to a scored
// span, the spans scored approach what the slots allow in max_wait, and
// the rest go on at once with a status instead of waiting out max_wait.
func TestBurstIsJudgedSpanBySpan(t *testing.T) {
	const (
		spans   = 100
		chunks  = 3
		slots   = 4
		latency = 100 * time.Millisecond
		maxWait = 10 * latency
	)
	var firstRequest sync.Once
	var first time.Time
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		firstRequest.Do(func() { first = time.Now() })
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = latency
		return rep
	})
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxConcurrency = slots
		c.Cache.Size = 0
		setMaxWait(c, maxWait)
	})
	b := newBatch("svc")
	for i := range spans {
		b.project(fmt.Sprintf("r%03d", i), "q", "Paris",
			fmt.Sprintf("Paris %d", i), fmt.Sprintf("Berlin %d", i), fmt.Sprintf("Paris again %d", i))
	}
	start := time.Now()
	h.consume(b.td)
	h.waitSpans(spans)
	statuses := map[string]int{}
	for _, s := range h.spansByName() {
		statuses[attrStr(s, ragattr.Status)+"/"+attrStr(s, ragattr.Reason)]++
	}
	scored := statuses[ragattr.StatusScored+"/"]
	paid := srv.Calls()
	// What the slots allow in max_wait at the latency the judge really had
	// (the server's delay plus this machine's overhead, which a loaded
	// machine raises), from the first request on (reading a hundred spans
	// under the race detector on a loaded machine takes part of max_wait):
	// the test holds the scheduler to that, not to a clock.
	lat := histogram(t, h.tel, metricLatency)
	var sum float64
	var n uint64
	for _, dp := range lat.DataPoints {
		sum, n = sum+dp.Sum, n+dp.Count
	}
	measured := time.Duration(sum / float64(n) * float64(time.Second))
	// Only whole rounds of requests count: one that would end after the
	// deadline is not sent.
	window := maxWait - first.Sub(start)
	rounds := math.Floor(float64(window) / float64(max(measured, latency)))
	capacity := float64(slots) * rounds / chunks
	t.Logf("statuses %v; %d judge replies paid for; goodput %.3f spans per reply (ideal %.3f); latency %s; first request after %s; capacity %.1f spans",
		statuses, paid, float64(scored)/float64(paid), 1.0/chunks, measured, first.Sub(start).Round(time.Millisecond), capacity)
	if float64(scored) < 0.6*capacity {
		t.Errorf("%d spans scored, want close to the %.1f the slots allow in max_wait", scored, capacity)
	}
	if goodput := float64(scored) / float64(paid); goodput < 0.8/chunks {
		t.Errorf("goodput %.3f, want close to 1/%d", goodput, chunks)
	}
	h.shutdown(context.Background())
}

// Builtin:lexical judges in place: the span is scored within the same
// ConsumeTraces call and goes on in its own batch.
func TestBuiltinJudgesInPlace(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.plain("before")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	b.plain("after")
	h.consume(b.td)
	all := h.sink.AllTraces()
	if len(all) != 1 || all[0].SpanCount() != 3 {
		t.Fatalf("%d forwards; want the batch whole, at once", len(all))
	}
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q", got)
	}
	if h.p.held != 0 {
		t.Fatalf("%d spans held", h.p.held)
	}
}

// The reference is the first source present among
// reference_sources, in their order, and the source used is recorded.
func TestReferenceSourceOrder(t *testing.T) {
	for _, tc := range []struct {
		sources []string
		want    string
		text    string
	}{
		{nil, "reference", "The expected answer: Paris."}, // default [reference, answer]
		{[]string{"answer", "reference"}, "answer", "The generated answer: Paris."},
		{[]string{"query", "reference"}, "query", question},
	} {
		t.Run(tc.want, func(t *testing.T) {
			h, srv := newDialectHarness(t, func(c *config.Config) {
				if tc.sources != nil {
					c.ReferenceSources = tc.sources
				}
			})
			b := newBatch("svc")
			s := b.project("retrieve", question, "The expected answer: Paris.", dialectChunks...)
			s.Attributes().PutStr("rag.answer", "The generated answer: Paris.")
			h.consume(b.td)
			h.waitSpans(1)
			expectScored(t, h, "retrieve", tc.want, 5.0/6.0)
			expectJudgedAgainst(t, srv, tc.text)
		})
	}
}

// A candidate without chunks has no score and costs no judge
// call, whatever the dialect.
func TestNoChunksNeverCallsTheJudge(t *testing.T) {
	h, srv := newDialectHarness(t, nil)
	b := newBatch("svc")
	b.project("project-empty", question, "Paris")
	g := b.add("genai-no-text", pcommon.TraceID{})
	g.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	g.Attributes().PutStr("gen_ai.retrieval.query.text", question)
	g.Attributes().PutStr("gen_ai.retrieval.documents", `[{"id": "a", "score": 0.9}]`)
	o := b.add("openinference-no-documents", pcommon.TraceID{})
	o.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	o.Attributes().PutStr("input.value", question)
	h.consume(b.td)
	h.waitSpans(3)
	for _, name := range []string{"project-empty", "genai-no-text", "openinference-no-documents"} {
		expectStatus(t, h.span(name), ragattr.StatusNoChunks)
	}
	if srv.Calls() != 0 {
		t.Fatalf("%d judge calls for spans without chunks", srv.Calls())
	}
}

// Bad input never drops the span: it passes with a status, and is
// counted.
func TestBadInputPassesWithAStatusAndIsCounted(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.project("invalid-utf8", question, "Paris", "Paris \xff\xfe is the capital of France.", "Bananas \xc3\x28")
	wrongType := b.add("wrong-type", pcommon.TraceID{})
	wrongType.Attributes().PutInt("rag.chunks", 3)
	wrongType.Attributes().PutStr("rag.reference", "Paris")
	malformed := b.add("malformed-json", pcommon.TraceID{})
	malformed.Attributes().PutStr("rag.chunks", `[{"content": "Paris"`)
	malformed.Attributes().PutStr("rag.reference", "Paris")
	badRef := b.project("reference-not-text", question, "", "Paris")
	badRef.Attributes().PutInt("rag.reference", 7)
	many := make([]string, 10_000)
	for i := range many {
		many[i] = fmt.Sprintf("chunk %d", i)
	}
	b.project("ten-thousand-chunks", question, "Paris", many...)
	b.project("ten-mb-chunk", question, "Paris", strings.Repeat("Paris ", 10<<20/6))
	h.consume(b.td)
	h.waitSpans(6)
	want := map[string]string{
		"invalid-utf8": "scored", "wrong-type": "no_chunks", "malformed-json": "no_chunks",
		"reference-not-text": "no_reference", "ten-thousand-chunks": "too_large", "ten-mb-chunk": "too_large",
	}
	for name, status := range want {
		if got := attrStr(h.span(name), "rag.contextual_precision.status"); got != status {
			t.Errorf("%s: status %q, want %q", name, got, status)
		}
	}
	for status, n := range map[string]int64{"no_chunks": 2, "no_reference": 1, "too_large": 2} {
		if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_unscored_spans_total", map[string]string{"status": status}); got != n {
			t.Errorf("unscored{%s} = %d, want %d", status, got, n)
		}
	}
	if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_scored_spans_total", nil); got != 1 {
		t.Errorf("scored %d, want 1", got)
	}
	if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_candidate_spans_total", nil); got != 6 {
		t.Errorf("candidates %d, want 6", got)
	}
}

// Spans that are not candidates go on unchanged and cost the
// processor no allocation.
func TestPassThroughAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's bookkeeping allocates")
	}
	h := newHarness(t, nil)
	h.p.next = consumertest.NewNop() // a sink that records allocates
	b := newBatch("svc")
	for i := range 50 {
		s := b.plain(fmt.Sprintf("GET /items/%d", i))
		s.Attributes().PutStr("traceloop.entity.output", `{"result": "ok"}`)
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
	}
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() { _ = h.p.ConsumeTraces(ctx, b.td) }); allocs != 0 {
		t.Fatalf("%v allocations per batch of non-candidates", allocs)
	}
}

// The default judge is builtin:lexical, named so on the span
// and in the histogram's judge_model label.
func TestDefaultJudgeIsBuiltinLexical(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	if got := attrStr(h.span("retrieve"), "rag.contextual_precision.judge"); got != "builtin:lexical" {
		t.Fatalf("judge %q", got)
	}
	hist := histogram(t, h.tel, "rag_contextual_precision")
	if len(hist.DataPoints) != 1 {
		t.Fatalf("%d series", len(hist.DataPoints))
	}
	if v, _ := hist.DataPoints[0].Attributes.Value("judge_model"); v.AsString() != "builtin:lexical" {
		t.Fatalf("judge_model %q", v.AsString())
	}
}

// Judge.mode batched makes one request per span, per_chunk one
// per chunk.
func TestJudgeModeRequestsPerSpan(t *testing.T) {
	for mode, calls := range map[string]int64{"per_chunk": 3, "batched": 1} {
		t.Run(mode, func(t *testing.T) {
			h, srv := newDialectHarness(t, func(c *config.Config) { c.Judge.Mode = mode })
			b := newBatch("svc")
			b.project("retrieve", question, answer, dialectChunks...)
			h.consume(b.td)
			h.waitSpans(1)
			expectScored(t, h, "retrieve", "reference", 5.0/6.0)
			if srv.Calls() != calls {
				t.Fatalf("%d judge requests, want %d", srv.Calls(), calls)
			}
		})
	}
}

// A reference or answer of white space only is no text (a span
// with no usable reference gets no_reference): the next source is used, and
// with none the span is not judged against the blank.
func TestBlankTextIsNoReference(t *testing.T) {
	h, srv := newDialectHarness(t, nil)
	b := newBatch("svc")
	s := b.project("blank-reference", question, " \n\t ", dialectChunks...)
	s.Attributes().PutStr("rag.answer", answer)
	blank := b.project("blank-only", question, "   ", dialectChunks...)
	blank.Attributes().PutStr("rag.answer", "\t")
	h.consume(b.td)
	h.waitSpans(2)
	expectScored(t, h, "blank-reference", "answer", 5.0/6.0)
	expectStatus(t, h.span("blank-only"), ragattr.StatusNoReference)
	expectJudgedAgainst(t, srv, answer)
}

// With query among the sources the same span is scored against its query.
func TestQueryAsReference(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.ReferenceSources = []string{"reference", "answer", "query"} })
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	if got := attrStr(h.span("retrieve"), ragattr.ReferenceSource); got != "query" {
		t.Fatalf("reference_source %q", got)
	}
}

// Top_k cuts before max_chunks applies: 3 chunks with top_k 2 fit max_chunks 2.
func TestTopK(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.TopK = 2; c.MaxChunks = 2 })
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if attrStr(s, ragattr.K) != "2" || attrStr(s, ragattr.Verdicts) != "[true,false]" || attrStr(s, ragattr.Precision) != "1" {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
}

// A span scored by a collector upstream (agent → gateway) is not judged,
// annotated or counted again.
func TestAlreadyScoredSpansPassUntouched(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	s := b.project("retrieve", "q", "Paris", capitalChunks...)
	s.Attributes().PutStr(ragattr.Status, ragattr.StatusScored)
	s.Attributes().PutDouble(ragattr.Precision, 0.5)
	want := ptrace.NewTraces()
	b.td.CopyTo(want)
	h.consume(b.td)
	if all := h.sink.AllTraces(); len(all) != 1 || !reflect.DeepEqual(all[0], want) {
		t.Fatal("an already scored span was changed")
	}
	if got := counterValue(t, h.tel, metricCandidates, nil); got != 0 {
		t.Fatalf("candidates %d", got)
	}
}

// Chunks of the wrong type (numbers, bools, a JSON array of them) hold no
// text: no_chunks, no judge request, nothing in the product metrics.
func TestWrongTypedChunksAreNoChunks(t *testing.T) {
	addr := freeAddr(t)
	h, srv := newDialectHarness(t, func(c *config.Config) {
		c.ProductMetrics.ServerConfig.NetAddr.Endpoint = addr
		c.Attributes.Chunks = "app.chunks"
	})
	b := newBatch("svc")
	for name, raw := range map[string][]any{
		"ints": {int64(1), int64(2), int64(3)}, "bools": {true, false}, "doubles": {0.5, 1.5},
	} {
		for _, key := range []string{"rag.chunks", "app.chunks"} {
			s := b.add(key+"-"+name, pcommon.TraceID{})
			s.Attributes().PutStr("rag.reference", "Paris")
			_ = s.Attributes().PutEmptySlice(key).FromRaw(raw)
		}
	}
	j := b.add("json-ints", pcommon.TraceID{})
	j.Attributes().PutStr("rag.reference", "Paris")
	j.Attributes().PutStr("rag.chunks", "[1, 2, 3]")
	g := b.add("genai-ints", pcommon.TraceID{})
	g.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	g.Attributes().PutStr("rag.reference", "Paris")
	_ = g.Attributes().PutEmptySlice("gen_ai.retrieval.documents").FromRaw([]any{int64(1), int64(2)})
	// The dialects that recognise a retrieval by its results: a result
	// whose document field holds numbers is a retrieval without chunks.
	chroma := b.add("chroma-ints", pcommon.TraceID{})
	chroma.Attributes().PutStr("rag.reference", "Paris")
	for i := range 2 {
		e := chroma.Events().AppendEmpty()
		e.SetName("db.query.result")
		e.Attributes().PutInt("db.query.result.document", int64(i))
	}
	pinecone := b.add("pinecone-ints", pcommon.TraceID{})
	pinecone.Attributes().PutStr("rag.reference", "Paris")
	pinecone.Events().AppendEmpty().SetName("pinecone.query.result")
	meta := pinecone.Events().AppendEmpty()
	meta.SetName("pinecone.query.result.0.metadata")
	meta.Attributes().PutInt("text", 7)
	qdrant := b.add("qdrant-ints", pcommon.TraceID{})
	qdrant.Attributes().PutStr("rag.reference", "Paris")
	_ = qdrant.Attributes().PutEmptySlice("db.vector.query.result.0.metadata").FromRaw([]any{int64(1)})
	h.consume(b.td)
	h.waitSpans(11)
	if n := len(h.spansByName()); n != 11 {
		t.Fatalf("%d spans, want 11", n)
	}
	for name := range h.spansByName() {
		expectStatus(t, h.span(name), ragattr.StatusNoChunks)
	}
	if srv.Calls() != 0 {
		t.Errorf("%d judge requests for chunks without text", srv.Calls())
	}
	if body := scrapeOpenMetrics(t, addr); strings.Contains(body, "rag_contextual_precision_count{") ||
		strings.Contains(body, "rag_retrieval_outcome_total{") {
		t.Errorf("wrong-typed chunks recorded in the product metrics:\n%s", body)
	}
}
