package ragprecisionprocessor

import (
	"context"
	"fmt"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
)

// TestScoredSpan checks every attribute and the event of SPEC §5 on a span
// scored by an LLM judge whose verdicts are [yes, no, yes]: CP 5/6.
func TestScoredSpan(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("rag-api")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)

	s := h.span("retrieve")
	attrs := s.Attributes()
	want := map[string]any{
		"rag.contextual_precision":                  5.0 / 6.0,
		"rag.contextual_precision.passed":           true,
		"rag.contextual_precision.k":                int64(3),
		"rag.contextual_precision.relevant":         int64(2),
		"rag.contextual_precision.verdicts":         []any{true, false, true},
		"rag.contextual_precision.reference_source": "reference",
		"rag.contextual_precision.judge":            "openai:judge-model",
		"rag.contextual_precision.sample_rate":      1.0,
		"rag.contextual_precision.status":           "scored",
	}
	for k, w := range want {
		v, ok := attrs.Get(k)
		if !ok {
			t.Errorf("missing %s", k)
			continue
		}
		switch w := w.(type) {
		case float64:
			if v.Type() != pcommon.ValueTypeDouble || math.Abs(v.Double()-w) > 1e-12 {
				t.Errorf("%s = %v (%s), want double %v", k, v.AsRaw(), v.Type(), w)
			}
		case bool:
			if v.Type() != pcommon.ValueTypeBool || v.Bool() != w {
				t.Errorf("%s = %v (%s), want bool %v", k, v.AsRaw(), v.Type(), w)
			}
		case int64:
			if v.Type() != pcommon.ValueTypeInt || v.Int() != w {
				t.Errorf("%s = %v (%s), want int %v", k, v.AsRaw(), v.Type(), w)
			}
		case string:
			if v.Type() != pcommon.ValueTypeStr || v.Str() != w {
				t.Errorf("%s = %v (%s), want string %q", k, v.AsRaw(), v.Type(), w)
			}
		case []any:
			if v.Type() != pcommon.ValueTypeSlice || len(v.Slice().AsRaw()) != len(w) {
				t.Errorf("%s = %v, want %v", k, v.AsRaw(), w)
				continue
			}
			for i, x := range v.Slice().AsRaw() {
				if x != w[i] {
					t.Errorf("%s[%d] = %v, want %v", k, i, x, w[i])
				}
			}
		}
	}
	// The original attributes are kept.
	if attrStr(s, "rag.query") != "What is the capital of France?" || attrs.Len() != 3+len(want) {
		t.Errorf("attributes: %v", attrs.AsRaw())
	}

	if s.Events().Len() != 1 {
		t.Fatalf("%d events, want 1", s.Events().Len())
	}
	ev := s.Events().At(0)
	if ev.Name() != "gen_ai.evaluation.result" || ev.Timestamp() == 0 {
		t.Fatalf("event %q at %v", ev.Name(), ev.Timestamp())
	}
	ea := ev.Attributes()
	if v, _ := ea.Get("gen_ai.evaluation.name"); v.Str() != "contextual_precision" {
		t.Errorf("gen_ai.evaluation.name %q", v.Str())
	}
	if v, _ := ea.Get("gen_ai.evaluation.score.value"); v.Type() != pcommon.ValueTypeDouble || math.Abs(v.Double()-5.0/6.0) > 1e-12 {
		t.Errorf("gen_ai.evaluation.score.value %v", v.AsRaw())
	}
	if v, _ := ea.Get("gen_ai.evaluation.score.label"); v.Str() != "pass" {
		t.Errorf("gen_ai.evaluation.score.label %q", v.Str())
	}
	expl, _ := ea.Get("gen_ai.evaluation.explanation")
	if !strings.Contains(expl.Str(), "2 of 3 chunks relevant at ranks 1, 3") || !strings.Contains(expl.Str(), "openai:judge-model") {
		t.Errorf("explanation %q", expl.Str())
	}
	if ea.Len() != 4 {
		t.Errorf("event attributes %v", ea.AsRaw())
	}
}

func TestFailLabelBelowThreshold(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Threshold = 0.9 })
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "Paris",
		"Berlin is the capital of Germany.", "Paris is the capital of France.")
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if attrStr(s, "rag.contextual_precision.passed") != "false" || attrStr(s, "rag.contextual_precision") != "0.5" {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	if v, _ := s.Events().At(0).Attributes().Get("gen_ai.evaluation.score.label"); v.Str() != "fail" {
		t.Fatalf("label %q", v.Str())
	}
}

// expectStatus checks that a span carries only the given status (and, for
// judge_error and overflow, its reason) among the processor's attributes,
// and no event.
func expectStatus(t *testing.T, s ptrace.Span, status string) {
	t.Helper()
	if got := attrStr(s, ragattr.Status); got != status {
		t.Fatalf("status %q, want %q (attributes %v)", got, status, s.Attributes().AsRaw())
	}
	_, hasReason := s.Attributes().Get(ragattr.Reason)
	if wantReason := status == ragattr.StatusJudgeError || status == ragattr.StatusOverflow; hasReason != wantReason {
		t.Errorf("status %s: reason present %v, want %v (attributes %v)", status, hasReason, wantReason, s.Attributes().AsRaw())
	}
	for k := range s.Attributes().All() {
		if strings.HasPrefix(k, "rag.contextual_precision") && k != ragattr.Status && k != ragattr.Reason {
			t.Errorf("unscored span has %s", k)
		}
	}
	if s.Events().Len() != 0 {
		t.Errorf("unscored span has %d events", s.Events().Len())
	}
}

func TestStatusNoChunks(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.project("empty", "q", "r") // rag.chunks = []
	wrongType := b.add("int", pcommon.TraceID{})
	wrongType.Attributes().PutInt("rag.chunks", 3)
	malformed := b.add("malformed", pcommon.TraceID{})
	malformed.Attributes().PutStr("rag.chunks", `["unterminated`)
	malformed.Attributes().PutStr("rag.reference", "r")
	h.consume(b.td)
	// Statuses decided on arrival travel with the batch, undelayed.
	if h.sink.SpanCount() != 3 {
		t.Fatalf("%d spans forwarded synchronously, want 3", h.sink.SpanCount())
	}
	for _, name := range []string{"empty", "int", "malformed"} {
		expectStatus(t, h.span(name), ragattr.StatusNoChunks)
	}
}

func TestStatusNoReference(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.project("retrieve", "What is the capital of France?", "", capitalChunks...)
	h.consume(b.td)
	if h.sink.SpanCount() != 1 {
		t.Fatal("a span without reference must not be held")
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusNoReference)
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

func TestStatusTooLarge(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.MaxChunks = 2; c.MaxRetrievalBytes = 1 << 20 })
	b := newBatch("svc")
	b.project("many", "q", "r", "a", "b", "c")
	b.project("huge", "q", "r", strings.Repeat("x", 10<<20))
	h.consume(b.td)
	if h.sink.SpanCount() != 2 {
		t.Fatalf("%d spans", h.sink.SpanCount())
	}
	expectStatus(t, h.span("many"), ragattr.StatusTooLarge)
	expectStatus(t, h.span("huge"), ragattr.StatusTooLarge)
}

// top_k cuts before max_chunks applies: 3 chunks with top_k 2 fit max_chunks 2.
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

func TestStatusJudgeError(t *testing.T) {
	srv := chatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 401} })
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
}

// A chunk the judge cannot decide leaves the span without score, never with
// a guessed one.
func TestOneUnjudgedChunkMeansNoScore(t *testing.T) {
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if strings.Contains(r.Block("CHUNK"), "Berlin") {
			return chattest.Reply{Content: "I think yes"}
		}
		return chattest.KeywordJudge("Paris")(n, r)
	})
	h := newHarness(t, func(c *config.Config) { llmJudge(srv.URL)(c); c.Judge.MaxRetries = 2 })
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
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

func TestStatusBudget(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxRequestsPerSecond = 3 // one span of 3 chunks per second
	}, judge.WithClock(stoppedClock{}))
	b := newBatch("svc")
	b.project("first", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	// Verdicts served by the cache cost no budget: the same chunks again are
	// scored; new ones are not.
	b = newBatch("svc")
	b.project("cached", "q", "Paris", capitalChunks...)
	b.project("second", "q", "Paris", "Rome is the capital of Italy.", "Paris is in France.", "Madrid")
	h.consume(b.td)
	h.waitSpans(3)
	for _, name := range []string{"first", "cached"} {
		if got := attrStr(h.span(name), ragattr.Status); got != ragattr.StatusScored {
			t.Fatalf("%s: %q", name, got)
		}
	}
	expectStatus(t, h.span("second"), ragattr.StatusBudget)
	if srv.Calls() != 3 {
		t.Fatalf("%d judge calls, want 3", srv.Calls())
	}
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

func TestStatusShutdown(t *testing.T) {
	h, _ := newBlockedHarness(t, nil)
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	if h.sink.SpanCount() != 0 {
		t.Fatal("span not held")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h.shutdown(ctx)
	if h.sink.SpanCount() != 1 {
		t.Fatalf("Shutdown returned with %d spans forwarded, want 1", h.sink.SpanCount())
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusShutdown)

	// After Shutdown, selected spans pass at once with status shutdown.
	b = newBatch("svc")
	b.project("late", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	expectStatus(t, h.span("late"), ragattr.StatusShutdown)
}

// Shutdown with time to spare lets in-flight judgements finish.
func TestShutdownWaitsForJudgements(t *testing.T) {
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = 50 * time.Millisecond
		return rep
	})
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.shutdown(context.Background())
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q, want scored", got)
	}
}

// max_pending_bytes bounds held memory whatever max_pending_spans allows;
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

// Shutdown is bounded by shutdown_timeout even when the collector gives it
// no deadline, as the collector does.
func TestShutdownTimeout(t *testing.T) {
	h, _ := newBlockedHarness(t, func(c *config.Config) { c.ShutdownTimeout = 100 * time.Millisecond })
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	start := time.Now()
	h.shutdown(context.Background())
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %s", d)
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusShutdown)
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

// SPEC §8: secrets and span content never reach logs above debug, even on
// the failure paths that log, and a reply echoing the chunk is not quoted.
func TestNoContentOrSecretsInLogs(t *testing.T) {
	const chunk = "CONFIDENTIAL chunk text about Paris"
	srv := chatServer(t, func(int, chattest.Request) chattest.Reply {
		return chattest.Reply{Content: `{"verdict": "` + chunk + `"}`}
	})
	core, logs := observer.New(zapcore.InfoLevel)
	h := newHarnessLogged(t, zap.New(core), func(c *config.Config) { llmJudge(srv.URL)(c); c.Judge.APIKey = "sk-very-secret" })
	b := newBatch("svc")
	b.project("retrieve", "SECRET question", "PRIVATE reference", chunk)
	h.consume(b.td)
	h.waitSpans(1)
	expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
	if logs.Len() == 0 {
		t.Fatal("a judge failure should be logged")
	}
	expectLogsFree(t, logs, "CONFIDENTIAL", "SECRET question", "PRIVATE reference", "sk-very-secret")
}

// expectLogsFree fails if any logged message or field contains one of the
// secrets.
func expectLogsFree(t *testing.T, logs *observer.ObservedLogs, secrets ...string) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + fmt.Sprint(v)
		}
		for _, secret := range secrets {
			if strings.Contains(line, secret) {
				t.Fatalf("log line %q contains %q", line, secret)
			}
		}
	}
}
