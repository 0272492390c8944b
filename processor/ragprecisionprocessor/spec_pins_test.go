package ragprecisionprocessor

// Pins of SPEC.md behaviours that no other test of this package held to
// their public names or values. Names are written out literally here, not
// through the package's constants: users, dashboards and alert rules depend
// on the strings, so renaming a constant must fail a test.

import (
	"context"
	"fmt"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
)

// labelValues lists the distinct values of one label over the points of an
// int64 sum.
func labelValues(t *testing.T, h *harness, metric, label string) []string {
	t.Helper()
	m, err := h.tel.GetMetric(metric)
	if err != nil {
		t.Fatalf("%s: %v", metric, err)
	}
	var out []string
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(label)); ok && !slices.Contains(out, v.AsString()) {
			out = append(out, v.AsString())
		}
	}
	slices.Sort(out)
	return out
}

// SPEC §5/§6: the eight unscored statuses and the judge request outcomes,
// by their public names, are series of the operational metrics from the
// start.
func TestSpecStatusAndOutcomeNames(t *testing.T) {
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

// SPEC §6: every metric it names exists under that name once a span has
// been scored by an LLM judge. (Departure: counters end in _total.)
func TestSpecMetricNames(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	for _, name := range []string{
		"rag_contextual_precision",
		"rag_contextual_precision_squares_total",
		"otelcol_processor_ragprecision_candidate_spans_total",
		"otelcol_processor_ragprecision_selected_spans_total",
		"otelcol_processor_ragprecision_scored_spans_total",
		"otelcol_processor_ragprecision_unscored_spans_total",
		"otelcol_processor_ragprecision_judge_requests_total",
		"otelcol_processor_ragprecision_verdict_cache_hits_total",
		"otelcol_processor_ragprecision_verdict_cache_misses_total",
		"otelcol_processor_ragprecision_judge_tokens_total",
		"otelcol_processor_ragprecision_judge_latency_seconds",
		"otelcol_processor_ragprecision_held_spans",
	} {
		if _, err := h.tel.GetMetric(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// floatSum sums the points of a float64 counter whose attributes include
// want, and returns the attribute sets it found.
func floatSum(t *testing.T, h *harness, name string, want map[string]string) (float64, []attribute.Set) {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var total float64
	var sets []attribute.Set
	for _, dp := range m.Data.(metricdata.Sum[float64]).DataPoints {
		if matches(dp.Attributes, want) {
			total += dp.Value
			sets = append(sets, dp.Attributes)
		}
	}
	return total, sets
}

// SPEC §6: the sum of squared scores per series, beside the histogram with
// its labels; candidate, selected and scored counts per service_name and
// data_source; and data_source taken from attributes.data_source before
// gen_ai.data_source.id before the span name.
func TestSpecSquaresAndPerSeriesCounts(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Attributes.DataSource = "app.index"
	})
	b := newBatch("rag-api")
	good := b.project("retrieve-good", question, "Paris", capitalChunks...) // [1,0,1] -> 5/6
	good.Attributes().PutStr("app.index", "faq")
	good.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	bad := b.project("retrieve-bad", question, "Paris", "Berlin", "Madrid", "Paris!") // [0,0,1] -> 1/3
	bad.Attributes().PutStr("app.index", "faq")
	other := b.project("retrieve-other", question, "Paris", "Paris.") // [1] -> 1
	other.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	h.consume(b.td)
	h.waitSpans(3)

	faq := map[string]string{"service_name": "rag-api", "data_source": "faq"}
	sq, sets := floatSum(t, h, "rag_contextual_precision_squares_total", faq)
	if want := 25.0/36 + 1.0/9; math.Abs(sq-want) > 1e-12 || len(sets) != 1 {
		t.Errorf("squares{faq} = %v over %d series, want %v over 1", sq, len(sets), want)
	}
	if len(sets) == 1 {
		labels := map[string]string{}
		for _, kv := range sets[0].ToSlice() {
			labels[string(kv.Key)] = kv.Value.AsString()
		}
		want := map[string]string{"service_name": "rag-api", "data_source": "faq", "reference_source": "reference", "judge_model": "openai:judge-model"}
		if fmt.Sprint(labels) != fmt.Sprint(want) {
			t.Errorf("squares labels %v, want the histogram's %v", labels, want)
		}
	}
	if sq, _ := floatSum(t, h, "rag_contextual_precision_squares_total", map[string]string{"data_source": "wiki"}); sq != 1 {
		t.Errorf("squares{wiki} = %v, want 1", sq)
	}
	wiki := map[string]string{"service_name": "rag-api", "data_source": "wiki"}
	for _, c := range []struct {
		name      string
		faq, wiki int64
	}{
		{"otelcol_processor_ragprecision_candidate_spans_total", 2, 1},
		{"otelcol_processor_ragprecision_selected_spans_total", 2, 1},
		{"otelcol_processor_ragprecision_scored_spans_total", 2, 1},
	} {
		if got := counterValue(t, h.tel, c.name, faq); got != c.faq {
			t.Errorf("%s{faq} = %d, want %d", c.name, got, c.faq)
		}
		if got := counterValue(t, h.tel, c.name, wiki); got != c.wiki {
			t.Errorf("%s{wiki} = %d, want %d", c.name, got, c.wiki)
		}
	}
}

// SPEC §5: a judge_error says which failure it was, on the span and as a
// label of the unscored counter, and the failed request is counted with
// outcome error. (Departure: the span attribute is
// rag.contextual_precision.reason.)
func TestSpecJudgeErrorReasons(t *testing.T) {
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

// SPEC §4: beyond max_pending_spans candidates pass with status overflow;
// the reason names the limit. (Departure: overflow also when the judge,
// at its measured latency, cannot finish the span within max_wait, with
// reason judge_capacity.)
func TestSpecOverflowReasons(t *testing.T) {
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

// SPEC §2: the reference is the first source present among
// reference_sources, in their order, and the source used is recorded.
func TestSpecReferenceSourceOrder(t *testing.T) {
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

// SPEC §2: passed = CP >= threshold; a score equal to the threshold passes.
func TestSpecThresholdIsInclusive(t *testing.T) {
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

// SPEC §2/§3: a candidate without chunks has no score and costs no judge
// call, whatever the dialect.
func TestSpecNoChunksNeverCallsTheJudge(t *testing.T) {
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

// SPEC §8: bad input never drops the span: it passes with a status, and is
// counted.
func TestSpecBadInputPassesWithAStatusAndIsCounted(t *testing.T) {
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

// SPEC §3, trace_join: the trace's answer is the root span's, else the
// last-ending LLM span's, whatever order they arrive in.
func TestSpecTraceAnswerPrecedence(t *testing.T) {
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

// SPEC §5: spans that are not candidates go on unchanged and cost the
// processor no allocation.
func TestSpecPassThroughAllocatesNothing(t *testing.T) {
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

// SPEC §4/§7: the default judge is builtin:lexical, named so on the span
// and in the histogram's judge_model label.
func TestSpecDefaultJudgeIsBuiltinLexical(t *testing.T) {
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

// SPEC §4/§7: judge.mode batched makes one request per span, per_chunk one
// per chunk.
func TestSpecJudgeModeRequestsPerSpan(t *testing.T) {
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

// A reference or answer of white space only is no text (SPEC §3: a span
// with no usable reference gets no_reference): the next source is used, and
// with none the span is not judged against the blank.
func TestSpecBlankTextIsNoReference(t *testing.T) {
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
