package ragprecisionprocessor

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
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
	if attrStr(s, attrStatus) != statusScored || attrStr(s, attrJudge) != "cascade:openai:judge-model" {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	expl, _ := s.Events().At(0).Attributes().Get(attrEvalExplanation)
	if !strings.Contains(expl.Str(), "by builtin:lexical") || !strings.Contains(expl.Str(), "by openai:judge-model") {
		t.Fatalf("explanation does not say which stage decided what: %q", expl.Str())
	}
	lexical := counterValue(t, h.tel, metricVerdicts, map[string]string{labelStage: "builtin:lexical"})
	llm := counterValue(t, h.tel, metricVerdicts, map[string]string{labelStage: "openai:judge-model"})
	if lexical == 0 || llm == 0 || lexical+llm != 4 || llm != srv.Calls() {
		t.Fatalf("verdicts by stage: lexical %d, llm %d (LLM calls %d)", lexical, llm, srv.Calls())
	}
}

// builtin:lexical says at start-up that it ignores judge.criteria.
func TestBuiltinSaysItIgnoresCriteria(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	newHarnessLogged(t, zap.New(core), func(c *config.Config) { c.Judge.Criteria = "must state the policy number" })
	if logs.FilterMessageSnippet("cannot read criteria").Len() != 1 {
		t.Fatalf("no start-up line says the criteria are ignored: %v", logs.All())
	}
}
