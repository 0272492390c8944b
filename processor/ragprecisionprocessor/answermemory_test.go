package ragprecisionprocessor

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
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
	if a, ok := m.get(id, now.Add(time.Second)); !ok || a.Best() != "the answer" {
		t.Fatal("forgotten too early")
	}
	if _, ok := m.get(id, now.Add(1001*time.Millisecond)); ok {
		t.Fatal("remembered past trace_join.wait")
	}
	if m.len() != 0 || m.bytes != 0 {
		t.Fatalf("%d entries, %d bytes left", m.len(), m.bytes)
	}
}

// AnswerMemory keeps m.bytes equal to the bytes of the answers it holds, so
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
