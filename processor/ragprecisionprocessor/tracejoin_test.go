package ragprecisionprocessor

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ragprecision/ragprecision/internal/ragattr"
)

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

// The trace's answer is the root span's, else the
// last-ending LLM span's, whatever order they arrive in.
func TestTraceAnswerPrecedence(t *testing.T) {
	t.Run("root before LLM span", func(t *testing.T) {
		h, srv := newDialectHarness(t, rootJoinConfig)
		tid := traceID()
		b := newBatch("svc")
		openInferenceRetriever(b, "retrieve", tid)
		llm := openInferenceLLM(b, "llm", tid, "Bananas contain potassium.")
		llm.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(time.Minute)))
		root := rootSpan(b, tid, "chain")
		root.Attributes().PutStr("openinference.span.kind", "CHAIN")
		root.Attributes().PutStr("output.value", answer)
		h.consume(b.td)
		h.waitSpans(3)
		expectScored(t, h, "retrieve", "answer", 5.0/6.0)
		expectJudgedAgainst(t, srv, answer)
	})
	t.Run("last-ending, not last-arriving, LLM span", func(t *testing.T) {
		h, srv := newDialectHarness(t, joinConfig)
		tid := traceID()
		b := newBatch("svc")
		openInferenceRetriever(b, "retrieve", tid)
		openInferenceLLM(b, "llm-ends-last", tid, answer)
		h.consume(b.td)
		b = newBatch("svc")
		early := openInferenceLLM(b, "llm-arrives-last", tid, "Bananas contain potassium.")
		early.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute)))
		h.consume(b.td)
		h.waitSpans(3)
		expectScored(t, h, "retrieve", "answer", 5.0/6.0)
		expectJudgedAgainst(t, srv, answer)
	})
	// The same when both answers went through before the retrieval span
	// came (the answers it finds are the remembered ones).
	t.Run("last-ending LLM span, remembered", func(t *testing.T) {
		h, srv := newDialectHarness(t, joinConfig)
		tid := traceID()
		b := newBatch("svc")
		openInferenceLLM(b, "llm-ends-last", tid, answer)
		h.consume(b.td)
		b = newBatch("svc")
		early := openInferenceLLM(b, "llm-arrives-last", tid, "Bananas contain potassium.")
		early.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute)))
		h.consume(b.td)
		b = newBatch("svc")
		openInferenceRetriever(b, "retrieve", tid)
		h.consume(b.td)
		h.waitSpans(3)
		expectScored(t, h, "retrieve", "answer", 5.0/6.0)
		expectJudgedAgainst(t, srv, answer)
	})
}
