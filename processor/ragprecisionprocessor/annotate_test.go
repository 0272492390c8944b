package ragprecisionprocessor

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// An empty chunk keeps its rank, is not relevant, costs no request, and the
// event says why.
func TestEmptyChunkIsExplained(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", "Paris is the capital.", "", "Paris again.")
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if v, _ := s.Attributes().Get(ragattr.Precision); attrStr(s, ragattr.Status) != ragattr.StatusScored || math.Abs(v.Double()-5.0/6.0) > 1e-12 {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d judge requests, want 2: the empty chunk is not sent", srv.Calls())
	}
	expl, _ := s.Events().At(0).Attributes().Get(ragattr.EvaluationExplanation)
	if !strings.Contains(expl.Str(), "empty, so not relevant without asking the judge: rank 2") {
		t.Fatalf("explanation %q", expl.Str())
	}
}

// The eight unscored statuses and the judge request outcomes,
// by their public names, are series of the operational metrics from the
// start.
func TestStatusAndOutcomeNames(t *testing.T) {
	h := newHarness(t, nil)
	statuses := labelValues(t, h, "otelcol_processor_ragprecision_unscored_spans_total", "status")
	want := []string{"budget", "judge_error", "no_chunks", "no_reference", "overflow", "shutdown", "timeout", "too_large"}
	if !slices.Equal(statuses, want) {
		t.Errorf("unscored statuses %v, want %v", statuses, want)
	}
	outcomes := labelValues(t, h, "otelcol_processor_ragprecision_judge_requests_total", "outcome")
	for _, o := range []string{"ok", "error", "retry"} {
		if !slices.Contains(outcomes, o) {
			t.Errorf("judge request outcomes %v lack %q", outcomes, o)
		}
	}
}

// A judge_error says which failure it was, on the span and as a
// label of the unscored counter, and the failed request is counted with
// outcome error. (Departure: the span attribute is
// rag.contextual_precision.reason.)
func TestJudgeErrorReasons(t *testing.T) {
	closed := chattest.NewServer(chattest.KeywordJudge("Paris"))
	closedURL := closed.URL
	closed.Close()
	for _, tc := range []struct {
		reason string
		reply  chattest.Handler
		url    string
		mutate func(*config.Config)
	}{
		{reason: "rate_limited", reply: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 429} }},
		{reason: "server_error", reply: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 500} }},
		{reason: "unreachable", url: closedURL},
		{reason: "timeout", reply: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Delay: 3 * time.Second} },
			mutate: func(c *config.Config) { c.Judge.ClientConfig.Timeout = 100 * time.Millisecond }},
		{reason: "bad_reply", reply: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Content: `{"verdict": "maybe"}`} }},
		{reason: "auth", reply: func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 401} }},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			url := tc.url
			if url == "" {
				url = chatServer(t, tc.reply).URL
			}
			h := newHarness(t, func(c *config.Config) {
				llmJudge(url)(c)
				if tc.mutate != nil {
					tc.mutate(c)
				}
			})
			b := newBatch("svc")
			b.project("retrieve", question, "Paris", "Paris is the capital of France.")
			h.consume(b.td)
			h.waitSpans(1)
			s := h.span("retrieve")
			if st, r := attrStr(s, "rag.contextual_precision.status"), attrStr(s, "rag.contextual_precision.reason"); st != "judge_error" || r != tc.reason {
				t.Fatalf("status %q reason %q, want judge_error %s", st, r, tc.reason)
			}
			if n := counterValue(t, h.tel, "otelcol_processor_ragprecision_unscored_spans_total", map[string]string{"status": "judge_error", "reason": tc.reason}); n != 1 {
				t.Errorf("unscored{judge_error, %s} = %d, want 1", tc.reason, n)
			}
			if n := counterValue(t, h.tel, "otelcol_processor_ragprecision_judge_requests_total", map[string]string{"outcome": "error"}); n != 1 {
				t.Errorf("judge_requests{outcome=error} = %d, want 1", n)
			}
		})
	}
}

// Beyond max_pending_spans candidates pass with status overflow;
// the reason names the limit. (Departure: overflow also when the judge,
// at its measured latency, cannot finish the span within max_wait, with
// reason judge_capacity.)
func TestOverflowReasons(t *testing.T) {
	t.Run("max_pending_spans", func(t *testing.T) {
		h, bj := newBlockedHarness(t, func(c *config.Config) { c.MaxPendingSpans = 1 })
		b := newBatch("svc")
		b.project("held", question, "Paris", capitalChunks...)
		b.project("overflowed", question, "Paris", capitalChunks...)
		h.consume(b.td)
		s := h.span("overflowed")
		if st, r := attrStr(s, "rag.contextual_precision.status"), attrStr(s, "rag.contextual_precision.reason"); st != "overflow" || r != "max_pending_spans" {
			t.Fatalf("status %q reason %q", st, r)
		}
		if n := counterValue(t, h.tel, "otelcol_processor_ragprecision_unscored_spans_total", map[string]string{"status": "overflow", "reason": "max_pending_spans"}); n != 1 {
			t.Errorf("unscored{overflow, max_pending_spans} = %d", n)
		}
		bj.open()
		h.waitSpans(2)
	})
	t.Run("judge_capacity", func(t *testing.T) {
		const latency = 100 * time.Millisecond
		srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
			rep := chattest.KeywordJudge("Paris")(n, r)
			rep.Delay = latency
			return rep
		})
		h := newHarness(t, func(c *config.Config) {
			llmJudge(srv.URL)(c)
			c.Judge.MaxConcurrency = 1
			setMaxWait(c, 10*latency)
		})
		// One request teaches the judge its latency.
		b := newBatch("svc")
		b.project("warm-up", question, "Paris", "Paris warms up.")
		h.consume(b.td)
		h.waitSpans(1)
		if got := attrStr(h.span("warm-up"), "rag.contextual_precision.status"); got != "scored" {
			t.Fatalf("warm-up: %q", got)
		}
		// Twenty chunks one at a time take twenty latencies: twice max_wait.
		chunks := make([]string, 20)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("Paris chunk %d", i)
		}
		b = newBatch("svc")
		b.project("too-slow", question, "Paris", chunks...)
		h.consume(b.td)
		if h.sink.SpanCount() != 2 {
			t.Fatalf("%d spans: the span the judge cannot finish in time must go on at once", h.sink.SpanCount())
		}
		s := h.span("too-slow")
		if st, r := attrStr(s, "rag.contextual_precision.status"), attrStr(s, "rag.contextual_precision.reason"); st != "overflow" || r != "judge_capacity" {
			t.Fatalf("status %q reason %q, want overflow judge_capacity", st, r)
		}
		if n := counterValue(t, h.tel, "otelcol_processor_ragprecision_unscored_spans_total", map[string]string{"status": "overflow", "reason": "judge_capacity"}); n != 1 {
			t.Errorf("unscored{overflow, judge_capacity} = %d", n)
		}
		if srv.Calls() != 1 {
			t.Errorf("%d judge calls, want only the warm-up's", srv.Calls())
		}
	})
}

// Passed = CP >= threshold; a score equal to the threshold passes.
func TestThresholdIsInclusive(t *testing.T) {
	h, _ := newDialectHarness(t, func(c *config.Config) { c.Threshold = 0.5 })
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", "Berlin is the capital of Germany.", "Paris is the capital of France.") // [0,1] -> 0.5
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if attrStr(s, "rag.contextual_precision") != "0.5" || attrStr(s, "rag.contextual_precision.passed") != "true" {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	if v, _ := s.Events().At(0).Attributes().Get("gen_ai.evaluation.score.label"); v.Str() != "pass" {
		t.Fatalf("label %q", v.Str())
	}
}

// TestScoredSpan checks every attribute and the event of a scored span
// (README, "Output on spans"), judged by an LLM whose verdicts are [yes,
// no, yes]: CP 5/6.
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
		"rag.contextual_precision.judge_version":    h.p.cfg.Judge.Version(),
		// The retrieval diagnostics of [1,0,1] (README, "Output on spans").
		"rag.retrieval.outcome":             "misranked",
		"rag.retrieval.first_relevant_rank": int64(1),
		"rag.retrieval.reciprocal_rank":     1.0,
		"rag.retrieval.ndcg":                (1 + 1.0/2) / (1 + 1/math.Log2(3)),
		"rag.retrieval.precision":           2.0 / 3.0,
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
	if v, _ := ea.Get("rag.contextual_precision.judge_version"); v.Str() != h.p.cfg.Judge.Version() || ea.Len() != 5 {
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
	for _, e := range s.Events().All() {
		if e.Name() == ragattr.EvaluationEvent {
			t.Errorf("unscored span has a %s event", e.Name())
		}
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

func TestStatusBudget(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		// A request every 10 s: the second span would wait 30 s for the
		// refill, more than the half of max_wait (30s) it may.
		c.Judge.MaxRequestsPerSecond = 0.1
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

// A span the budget cannot pay for at once, but can within half of
// max_wait, is held for the refill and scored, not passed with status
// budget: spans arrive at random, and a budget that refused them at once
// would refuse a share of them well below its rate.
func TestBudgetHoldsSpanForItsRefill(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxRequestsPerSecond = 6 // two spans of 3 chunks a second
	})
	b := newBatch("svc")
	b.project("first", "q1", "Paris", capitalChunks...)
	b.project("second", "q2", "Paris", capitalChunks...)
	b.project("third", "q3", "Paris", capitalChunks...)
	start := time.Now()
	h.consume(b.td)
	h.waitSpans(3)
	for _, name := range []string{"first", "second", "third"} {
		if got := attrStr(h.span(name), ragattr.Status); got != ragattr.StatusScored {
			t.Fatalf("%s: status %q, want scored after the refill", name, got)
		}
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Fatalf("three spans of 3 requests under a budget of 6 a second judged in %v: the third must wait for the refill", took)
	}
	if srv.Calls() != 9 {
		t.Fatalf("%d judge calls, want 9", srv.Calls())
	}
}
