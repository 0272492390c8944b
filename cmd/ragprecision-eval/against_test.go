package main

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/recording"
)

// rescore is a replay in miniature: the recorded lines stripped of what the
// processor wrote and recorded again through a processor judging with
// judgeURL's keyword judge.
func rescore(t *testing.T, lines []string, judgeURL string) []string {
	t.Helper()
	var batches []ptrace.Traces
	for _, l := range lines {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		forEachSpan(td, func(s ptrace.Span) { recording.Strip(s) })
		batches = append(batches, td)
	}
	return record(t, func(c *config.Config) {
		c.Judge.Model, _ = config.ParseModel("openai:candidate")
		c.Judge.BaseURL = judgeURL
		c.Judge.APIKey = "sk-test"
		c.Judge.MaxRequestsPerSecond = 0
	}, batches...)
}

// -against compares two recordings of the same spans, span by span: the
// figures are those of judging the recording again with the replay's
// judge, and what either side lacks is counted.
func TestAgainstComparesRecordings(t *testing.T) {
	llm := chattest.NewServer(chattest.KeywordJudge("museum"))
	defer llm.Close()
	recorded := record(t, nil, traffic()...)
	replayed := rescore(t, recorded, llm.URL)
	recPath := writeLines(t, "recorded.json", recorded)
	cfgPath := writeFile(t, "collector.yaml", recordingConfigYAML)

	t.Setenv("EVAL_AGAINST_KEY", "sk-test")
	judgedOut, _, err := runEval(t, "-traces", recPath, "-config", cfgPath, "-judge", "openai:candidate",
		"-base-url", llm.URL, "-api-key-env", "EVAL_AGAINST_KEY", "-progress", "0")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runEval(t, "-traces", writeLines(t, "replayed.json", replayed), "-against", recPath, "-config", cfgPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, ds := range []string{"all", "handbook", "faq", "oi-retriever", "wiki"} {
		want := row(t, judgedOut, ds, "openai:candidate")
		got := row(t, out, ds, "openai:candidate")
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: compared %v, judged offline %v", ds, got, want)
		}
	}
	for _, want := range []string{
		"1 selected but not scored (no_reference 1), 5 scored; 5 of them compared\n",
		"Verdicts in -traces: 5 by openai:candidate",
		"Verdicts in -against: 5 by builtin:lexical",
		"Nothing was judged here",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not in -traces") {
		t.Errorf("spans reported missing:\n%s", out)
	}
}

// What the two recordings do not share is counted: a span the replay lost,
// one it did not score, one the recording never scored.
func TestAgainstCountsWhatDiffers(t *testing.T) {
	llm := chattest.NewServer(chattest.KeywordJudge("museum"))
	defer llm.Close()
	recorded := record(t, nil, traffic()...)
	replayed := rescore(t, recorded, llm.URL)
	// In the replay: the first handbook span dropped, the second one over
	// budget; in the recording: the faq span unscored.
	edit := func(lines []string, f func(ptrace.SpanSlice)) []string {
		var out []string
		for _, l := range lines {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			rss := td.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				sss := rss.At(i).ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					f(sss.At(j).Spans())
				}
			}
			b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
			out = append(out, string(b))
		}
		return out
	}
	handbook := 0
	replayed = edit(replayed, func(spans ptrace.SpanSlice) {
		spans.RemoveIf(func(s ptrace.Span) bool {
			if v, _ := s.Attributes().Get("index"); v.Str() == "handbook" {
				handbook++
				if handbook == 1 {
					return true
				}
				recording.Strip(s)
				s.Attributes().PutStr(ragattr.Status, ragattr.StatusBudget)
			}
			return false
		})
	})
	recorded = edit(recorded, func(spans ptrace.SpanSlice) {
		for i := 0; i < spans.Len(); i++ {
			if v, _ := spans.At(i).Attributes().Get("index"); v.Str() == "faq" && recording.ResultOf(spans.At(i)).Scored() {
				recording.Strip(spans.At(i))
				spans.At(i).Attributes().PutStr(ragattr.Status, ragattr.StatusTimeout)
			}
		}
	})
	out, _, err := runEval(t, "-traces", writeLines(t, "replayed.json", replayed), "-against", writeLines(t, "recorded.json", recorded),
		"-config", writeFile(t, "collector.yaml", recordingConfigYAML))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"2 selected but not scored (budget 1, no_reference 1), 3 scored; 2 of them compared, 1 skipped:",
		"1  " + skipAgainstUnscored + " (timeout)",
		"1 spans scored in -against are not in -traces",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if f := row(t, out, "all", "openai:candidate"); f[colRetrievals] != "2" {
		t.Errorf("compared %v", f)
	}
}
