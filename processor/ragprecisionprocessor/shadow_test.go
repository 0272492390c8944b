package ragprecisionprocessor

import (
	"fmt"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
)

// shadowOf points shadow_judge at a local Chat Completions server, judging
// every scored span.
func shadowOf(url string) func(*config.Config) {
	return func(c *config.Config) {
		c.ShadowJudge.Percentage = 100
		c.ShadowJudge.Model = mustModel("openai:shadow-model")
		c.ShadowJudge.BaseURL = url
		c.ShadowJudge.APIKey = "sk-shadow"
		c.ShadowJudge.MaxRequestsPerSecond = 0
	}
}

func mustModel(s string) config.Model {
	m, err := config.ParseModel(s)
	if err != nil {
		panic(err)
	}
	return m
}

// shadowAgreement reads shadow_verdicts_total by (verdict, shadow_verdict).
func shadowAgreement(t *testing.T, h *harness) map[[2]string]int64 {
	out := map[[2]string]int64{}
	for _, v := range []string{"relevant", "irrelevant"} {
		for _, sv := range []string{"relevant", "irrelevant"} {
			out[[2]string{v, sv}] = counterValue(t, h.tel, "otelcol_processor_ragprecision_shadow_verdicts_total",
				map[string]string{"verdict": v, "shadow_verdict": sv})
		}
	}
	return out
}

// The shadow judge judges the same chunks: its CP goes on the span beside
// the primary's, their agreement into shadow_verdicts_total, and the
// primary's score, status and metrics are what they would be without it.
// Here the primary is builtin:lexical, judged in place, and the span waits
// for the shadow.
func TestShadowJudgeScoresBesideThePrimary(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Berlin")) // the shadow calls Berlin relevant
	h := newHarness(t, shadowOf(srv.URL))
	b := newBatch("rag-api")
	b.project("retrieve", question, "Paris", capitalChunks...)
	b.plain("plain")
	h.consume(b.td)
	h.waitSpans(2)

	s := h.span("retrieve")
	if attrStr(s, "rag.contextual_precision.status") != "scored" || attrStr(s, "rag.contextual_precision.judge") != "builtin:lexical" {
		t.Fatalf("primary %v", s.Attributes().AsRaw())
	}
	primary, _ := s.Attributes().Get("rag.contextual_precision")
	shadowCP, ok := s.Attributes().Get("rag.contextual_precision.shadow")
	if !ok || math.Abs(shadowCP.Double()-0.5) > 1e-12 || attrStr(s, "rag.contextual_precision.shadow_judge") != "openai:shadow-model" {
		t.Fatalf("shadow score %v (judge %q), want 0.5 ([0,1,0]) by openai:shadow-model", shadowCP.AsRaw(), attrStr(s, "rag.contextual_precision.shadow_judge"))
	}
	// The shadow calls only the Berlin chunk (the second) relevant.
	want := map[[2]string]int64{{"relevant", "relevant"}: 0, {"relevant", "irrelevant"}: 0, {"irrelevant", "relevant"}: 0, {"irrelevant", "irrelevant"}: 0}
	verdicts, _ := s.Attributes().Get("rag.contextual_precision.verdicts")
	for i, v := range verdicts.Slice().AsRaw() {
		pv, sv := "irrelevant", "irrelevant"
		if v.(bool) {
			pv = "relevant"
		}
		if i == 1 {
			sv = "relevant"
		}
		want[[2]string{pv, sv}]++
	}
	if got := shadowAgreement(t, h); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agreement %v, want %v", got, want)
	}
	if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_shadow_spans_total", map[string]string{"status": "scored"}); got != 1 {
		t.Errorf("shadow spans scored %d, want 1", got)
	}
	if got := counterValue(t, h.tel, metricRequests, map[string]string{"purpose": "shadow", "judge_model": "openai:shadow-model", "outcome": "ok"}); got != 3 {
		t.Errorf("%d shadow requests, want 3 (one per chunk)", got)
	}
	// The primary's histogram holds the primary's score, once.
	hist := histogram(t, h.tel, metricPrecision)
	if len(hist.DataPoints) != 1 || hist.DataPoints[0].Count != 1 || hist.DataPoints[0].Sum != primary.Double() {
		t.Errorf("histogram %+v, want the primary's %v once", hist.DataPoints, primary.Double())
	}
	if s := h.span("plain"); attrStr(s, "rag.contextual_precision.status") != "" || s.Events().Len() != 0 {
		t.Errorf("plain span changed: %v", s.Attributes().AsRaw())
	}
}

// A cascade as primary with its LLM alone as the shadow: the shadow
// counters say how often the cascade agrees with the LLM, on the chunks
// its builtin stage decided and the rest.
func TestShadowMeasuresACascadeAgainstItsLLM(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.Model = mustModel("cascade:openai:judge-model")
		shadowOf(srv.URL)(c)
		c.ShadowJudge.Model = mustModel("openai:judge-model")
	})
	b := newBatch("rag-api")
	for i := range 5 {
		b.project(fmt.Sprint("retrieve-", i), question, "Paris", capitalChunks...)
	}
	h.consume(b.td)
	h.waitSpans(5)
	agree := shadowAgreement(t, h)
	total := agree[[2]string{"relevant", "relevant"}] + agree[[2]string{"irrelevant", "irrelevant"}] + agree[[2]string{"relevant", "irrelevant"}] + agree[[2]string{"irrelevant", "relevant"}]
	if total != 15 {
		t.Fatalf("%d chunk verdicts compared, want 15: %v", total, agree)
	}
	for _, s := range h.spansByName() {
		if _, ok := s.Attributes().Get("rag.contextual_precision.shadow"); !ok || attrStr(s, "rag.contextual_precision.judge") != "cascade:openai:judge-model" {
			t.Errorf("%s: %v", s.Name(), s.Attributes().AsRaw())
		}
	}
}

// A shadow judge that is down, slower than max_wait, or answers garbage
// never delays a span beyond max_wait, never changes its status or score,
// and loses nothing: its failures are only counted.
func TestShadowFaultsLeaveThePrimaryAlone(t *testing.T) {
	for _, c := range []struct {
		name   string
		handle chattest.Handler
		down   bool
		// statuses the shadow's spans may end with: a slow shadow ends at
		// the span's deadline (timeout), or at its own request timeout with
		// no time left to retry, whichever the engine sees first.
		statuses []string
	}{
		{"down", nil, true, []string{"judge_error"}},
		{"slow", func(int, chattest.Request) chattest.Reply {
			time.Sleep(1500 * time.Millisecond)
			return chattest.Reply{}
		}, false, []string{"timeout", "judge_error"}},
		{"garbage", func(int, chattest.Request) chattest.Reply { return chattest.Reply{Content: "maybe"} }, false, []string{"judge_error"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := "http://127.0.0.1:1/v1" // nothing listens there
			if !c.down {
				url = chatServer(t, c.handle).URL
			}
			primary := chatServer(t, chattest.KeywordJudge("Paris"))
			h := newHarness(t, func(cfg *config.Config) {
				llmJudge(primary.URL)(cfg)
				setMaxWait(cfg, time.Second)
				cfg.Judge.MaxRetries = 0
				shadowOf(url)(cfg)
				cfg.ShadowJudge.MaxRetries = 1
				cfg.ShadowJudge.ClientConfig.Timeout = 500 * time.Millisecond
			})
			b := newBatch("rag-api")
			for i := range 3 {
				b.project(fmt.Sprint("retrieve-", i), question, "Paris", capitalChunks...)
			}
			b.plain("plain")
			start := time.Now()
			h.consume(b.td)
			h.waitSpans(4)
			if took := time.Since(start); took > 1500*time.Millisecond {
				t.Errorf("the spans took %v, beyond max_wait (1s)", took)
			}
			for name, s := range h.spansByName() {
				if name == "plain" {
					continue
				}
				v, _ := s.Attributes().Get("rag.contextual_precision")
				if attrStr(s, "rag.contextual_precision.status") != "scored" || math.Abs(v.Double()-5.0/6) > 1e-12 {
					t.Errorf("%s: %v", name, s.Attributes().AsRaw())
				}
				if _, ok := s.Attributes().Get("rag.contextual_precision.shadow"); ok {
					t.Errorf("%s carries a shadow score from a failing shadow judge", name)
				}
			}
			ended := map[string]int64{}
			for _, status := range []string{"scored", "judge_error", "timeout", "budget", "overflow", "shutdown"} {
				ended[status] = counterValue(t, h.tel, "otelcol_processor_ragprecision_shadow_spans_total", map[string]string{"status": status})
			}
			var got int64
			for _, status := range c.statuses {
				got += ended[status]
			}
			if got != 3 {
				t.Errorf("shadow spans by status %v, want all 3 within %v", ended, c.statuses)
			}
			if got := counterValue(t, h.tel, metricUnscored, nil); got != 0 {
				t.Errorf("%d spans unscored", got)
			}
			h.shutdown(t.Context())
		})
	}
}

// shadow_judge.percentage picks that share of the scored spans, by trace,
// so that the same traces are judged twice on every replica.
func TestShadowPercentagePicksTraces(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		shadowOf(srv.URL)(c)
		c.ShadowJudge.Percentage = 25
	})
	const n = 400
	b := newBatch("rag-api")
	for i := range n {
		b.project(fmt.Sprint("retrieve-", i), question, "Paris", capitalChunks...)
	}
	h.consume(b.td)
	h.waitSpans(n)
	shadowed := 0
	for _, s := range h.spansByName() {
		_, ok := s.Attributes().Get("rag.contextual_precision.shadow")
		if ok {
			shadowed++
		}
		if ok != h.p.shadow.sampler.selected(s) {
			t.Fatalf("%s: shadow score %v, but its trace is selected: %v", s.Name(), ok, !ok)
		}
	}
	if shadowed < n/8 || shadowed > n*3/8 {
		t.Errorf("%d of %d spans shadowed at 25%%", shadowed, n)
	}
}

// A span that waits for its trace's answer is judged by the shadow too,
// against the same answer, once it comes; with an LLM primary and with
// builtin:lexical judged in place.
func TestShadowJudgesTraceJoinedSpans(t *testing.T) {
	for _, primary := range []string{"openai:judge-model", "builtin:lexical"} {
		t.Run(primary, func(t *testing.T) {
			srv := chatServer(t, chattest.KeywordJudge("Paris"))
			h := newHarness(t, func(c *config.Config) {
				llmJudge(srv.URL)(c)
				c.Judge.Model = mustModel(primary)
				rootJoinConfig(c)
				shadowOf(srv.URL)(c)
			})
			tid := traceID()
			b := newBatch("svc")
			openInferenceRetriever(b, "retrieve", tid)
			h.consume(b.td)
			if h.joins() != 1 {
				t.Fatal("the span does not wait for its trace's answer")
			}
			b = newBatch("svc")
			root := rootSpan(b, tid, "chain")
			root.Attributes().PutStr("openinference.span.kind", "CHAIN")
			root.Attributes().PutStr("output.value", answer)
			h.consume(b.td)
			h.waitSpans(2)
			s := h.span("retrieve")
			shadowCP, ok := s.Attributes().Get("rag.contextual_precision.shadow")
			if attrStr(s, "rag.contextual_precision.reference_source") != "answer" || !ok || math.Abs(shadowCP.Double()-5.0/6) > 1e-12 {
				t.Fatalf("%v", s.Attributes().AsRaw())
			}
			if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_shadow_spans_total", map[string]string{"status": "scored"}); got != 1 {
				t.Errorf("shadow spans scored %d, want 1", got)
			}
		})
	}
}

// With adaptive_sampling the shadow judge takes shadow_judge.percentage of
// the spans each series' rate selected, not every one selected below the
// fixed sampling_percentage × percentage.
func TestShadowShareUnderAdaptiveSampling(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		shadowOf(srv.URL)(c)
		c.Attributes.DataSource = "app.index"
		c.ShadowJudge.Percentage = 50
		c.AdaptiveSampling = config.AdaptiveSampling{Enabled: true, JudgeRequestsPerSecond: 10,
			MinJudgedPerHour: 100, MinPercentage: 20, MaxPercentage: 20, AdjustInterval: 30 * time.Second}
	})
	h.consume(retrievals(2000, "faq"))
	h.waitSpans(2000)
	scored, shadowed := 0, 0
	for _, td := range h.sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			if _, ok := s.Attributes().Get("rag.contextual_precision"); !ok {
				return
			}
			scored++
			if _, ok := s.Attributes().Get("rag.contextual_precision.shadow"); ok {
				shadowed++
			}
		})
	}
	t.Logf("%d scored at 20%%, %d of them by the shadow too", scored, shadowed)
	if scored < 300 || scored > 500 {
		t.Fatalf("%d of 2000 scored at 20%%", scored)
	}
	if share := float64(shadowed) / float64(scored); share < 0.4 || share > 0.6 {
		t.Errorf("shadow judged %.0f%% of the selected spans, want 50%%", 100*share)
	}
}
