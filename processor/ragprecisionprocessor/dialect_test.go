package ragprecisionprocessor

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// Spans below are shaped as the instrumentation libraries emit them. Each
// retrieval ranks a Paris chunk first, an unrelated one second and another
// Paris chunk third; a keyword judge (relevant = mentions Paris) makes the
// verdicts [1,0,1] = 5/6, so these tests check reading, not judging.

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

// Without the root, the last-ending LLM span's answer is used when
// trace_join.wait ends.
func TestTraceJoinFallsBackToLastLLMSpan(t *testing.T) {
	h, _ := newDialectHarness(t, joinConfig)
	tid := traceID()
	b := newBatch("svc")
	r := b.add("retrieve", tid)
	r.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	r.Attributes().PutStr("input.value", question)
	for i, c := range dialectChunks {
		r.Attributes().PutStr("retrieval.documents."+string(rune('0'+i))+".document.content", c)
	}
	early := openInferenceLLM(b, "llm-1", tid, "Bananas contain potassium.")
	early.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute)))
	h.consume(b.td)
	b = newBatch("svc")
	openInferenceLLM(b, "llm-2", tid, answer)
	h.consume(b.td)
	h.waitSpans(3)
	expectScored(t, h, "retrieve", "answer", 5.0/6.0)
}

// No answer anywhere in the trace: no_reference once trace_join.wait ends.
func TestTraceJoinWithoutAnswer(t *testing.T) {
	h, _ := newDialectHarness(t, joinConfig)
	b := newBatch("svc")
	r := b.add("retrieve", pcommon.TraceID{})
	r.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	r.Attributes().PutStr("retrieval.documents.0.document.content", dialectChunks[0])
	h.consume(b.td)
	if h.sink.SpanCount() != 0 {
		t.Fatal("the span must wait for its trace's answer")
	}
	h.waitSpans(1)
	expectStatus(t, h.span("retrieve"), ragattr.StatusNoReference)
	if n := h.joins(); n != 0 {
		t.Fatalf("join state left behind: %d", n)
	}
}
