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

// openInferenceRetriever appends an OpenInference retriever span of trace
// tid, which carries no answer of its own.
func openInferenceRetriever(b *batch, name string, tid pcommon.TraceID) ptrace.Span {
	r := b.add(name, tid)
	r.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	r.Attributes().PutStr("input.value", question)
	for i, c := range dialectChunks {
		r.Attributes().PutStr("retrieval.documents."+string(rune('0'+i))+".document.content", c)
	}
	return r
}

// openInferenceLLM appends an OpenInference LLM span of trace tid whose
// output is its answer.
func openInferenceLLM(b *batch, name string, tid pcommon.TraceID, output string) ptrace.Span {
	s := b.add(name, tid)
	s.Attributes().PutStr("openinference.span.kind", "LLM")
	s.Attributes().PutStr("output.value", output)
	return s
}

// expectJudgedAgainst fails unless every request the judge received had
// want as its reference.
func expectJudgedAgainst(t *testing.T, srv *chattest.Server, want string) {
	t.Helper()
	for _, r := range srv.Requests() {
		if got := r.Block("REFERENCE"); got != want {
			t.Fatalf("judged against %q, want %q", got, want)
		}
	}
}

// A retrieval span whose trace's answer went through in an earlier batch
// (exported by another process, or flushed earlier) is judged at once, not
// after trace_join.wait (here an hour: only the remembered answer can
// score it within the test).
func TestAnswerThatCameFirstIsUsed(t *testing.T) {
	h, _ := newDialectHarness(t, rootJoinConfig)
	tid := traceID()
	b := newBatch("frontend")
	root := rootSpan(b, tid, "chain")
	root.Attributes().PutStr("openinference.span.kind", "CHAIN")
	root.Attributes().PutStr("output.value", answer)
	h.consume(b.td)

	b = newBatch("retriever-service")
	openInferenceRetriever(b, "retrieve", tid)
	h.consume(b.td)
	h.waitSpans(2)
	expectScored(t, h, "retrieve", "answer", 5.0/6.0)
	if h.joins() != 0 {
		t.Fatal("the span waited although its trace's answer was known")
	}
}

// Only the root ends the wait: an LLM answer that came first is remembered
// and used once the root arrives without one.
func TestRememberedLLMAnswerWaitsForTheRoot(t *testing.T) {
	h, _ := newDialectHarness(t, rootJoinConfig)
	tid := traceID()
	b := newBatch("svc")
	openInferenceLLM(b, "llm", tid, answer)
	h.consume(b.td)
	b = newBatch("svc")
	openInferenceRetriever(b, "retrieve", tid)
	h.consume(b.td)
	if h.joins() != 1 {
		t.Fatal("without the root, the span must wait for it")
	}
	b = newBatch("svc")
	rootSpan(b, tid, "chain") // no answer of its own
	h.consume(b.td)
	h.waitSpans(3)
	expectScored(t, h, "retrieve", "answer", 5.0/6.0)
}

// A root span that is itself a retrieval span does not wait for itself.
func TestRootRetrievalSpanDoesNotWaitForItself(t *testing.T) {
	h, _ := newDialectHarness(t, rootJoinConfig)
	b := newBatch("svc")
	r := openInferenceRetriever(b, "retrieve-root", traceID())
	r.SetParentSpanID(pcommon.SpanID{})
	r.Attributes().PutStr("output.value", answer)
	lone := openInferenceRetriever(b, "retrieve-root-no-answer", traceID())
	lone.SetParentSpanID(pcommon.SpanID{})
	h.consume(b.td)
	h.waitSpans(2)
	expectScored(t, h, "retrieve-root", "answer", 5.0/6.0)
	expectStatus(t, h.span("retrieve-root-no-answer"), ragattr.StatusNoReference)
}

// The memory of answers is bounded in traces and bytes, and what it forgets
// for lack of room is counted.
func TestAnswerMemoryIsBounded(t *testing.T) {
	h, _ := newDialectHarness(t, func(c *config.Config) {
		rootJoinConfig(c)
		c.TraceJoin.MaxTraces = 2
		c.TraceJoin.MaxBytes = 100
	})
	for i := range 4 {
		b := newBatch("svc")
		root := rootSpan(b, traceID(), "chain")
		root.Attributes().PutStr("output.value", answer)
		h.consume(b.td)
		h.waitSpans(i + 1)
	}
	h.p.mu.Lock()
	n, bytes := h.p.answers.len(), h.p.answers.bytes
	h.p.mu.Unlock()
	if n > 2 || bytes > 100 {
		t.Fatalf("%d traces and %d bytes remembered, over the bounds", n, bytes)
	}
	if got := counterValue(t, h.tel, metricAnswersLost, nil); got != int64(4-n) {
		t.Fatalf("evicted %d, want %d", got, 4-n)
	}
}

// Remembered answers expire with trace_join.wait.
func TestAnswerMemoryExpires(t *testing.T) {
	m := newAnswerMemory(10, 1<<20, time.Second, func(int64) {})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	id := traceID()
	m.record(id, "the answer", true, 0, now)
	if a, ok := m.get(id, now.Add(time.Second)); !ok || a.best() != "the answer" {
		t.Fatal("forgotten too early")
	}
	if _, ok := m.get(id, now.Add(1001*time.Millisecond)); ok {
		t.Fatal("remembered past trace_join.wait")
	}
	if m.len() != 0 || m.bytes != 0 {
		t.Fatalf("%d entries, %d bytes left", m.len(), m.bytes)
	}
}
