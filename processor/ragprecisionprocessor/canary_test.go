package ragprecisionprocessor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
)

// canaryFile writes a labelled-retrieval file: the keyword judge calls the
// chunks with "Paris" relevant, so it agrees with these labels but for the
// second retrieval's last chunk, labelled relevant without the word.
func canaryFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "canary.jsonl")
	data := `{"id": "a", "query": "What is the capital of France?", "reference": "Paris", "chunks": [{"text": "Paris is the capital of France.", "relevant": true}, {"text": "Berlin is in Germany.", "relevant": false}]}
{"id": "b", "query": "Where is the Louvre?", "reference": "Paris", "chunks": [{"text": "The Louvre is in Paris.", "relevant": true}, {"text": "It is the French capital's museum.", "relevant": true}]}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// manyLouvres is a canary file of n retrievals about the Louvre.
func manyLouvres(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "louvre-%d", "query": "Where is the Louvre?", "reference": "Paris", "chunks": [{"text": "The Louvre (%d) is in Paris.", "relevant": true}, {"text": "A museum of the French capital (%d).", "relevant": true}]}`+"\n", i, i, i)
	}
	path := filepath.Join(t.TempDir(), "louvres.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitCounter waits until a counter of the processor's reaches want.
func waitCounter(t *testing.T, h *harness, name string, labels map[string]string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for counterValue(t, h.tel, name, labels) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %d, want %d", name, labels, counterValue(t, h.tel, name, labels), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The canary re-judges its file every interval, past the verdict cache,
// and counts the verdicts against the labels as a confusion matrix, the
// error in CP, and its runs; its requests are counted as the canary's.
func TestCanaryCountsAgreementWithTheLabels(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	file := canaryFile(t)
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.Canary = config.Canary{File: file, Interval: time.Second, MaxRetrievals: 2}
	})
	const runs = "otelcol_processor_ragprecision_canary_runs_total"
	waitCounter(t, h, runs, map[string]string{"outcome": "ok"}, 2)

	version := h.p.cfg.Judge.Version()
	matrix := func(label, verdict string) int64 {
		return counterValue(t, h.tel, "otelcol_processor_ragprecision_canary_verdicts_total",
			map[string]string{"label": label, "verdict": verdict, "judge_model": "openai:judge-model", "judge_version": version})
	}
	ok := counterValue(t, h.tel, runs, map[string]string{"outcome": "ok"})
	// Each run judges both retrievals: per run 2 relevant/relevant, 1
	// irrelevant/irrelevant, 1 relevant/irrelevant. A run may have ended
	// since the counters were read: compare per run, within one.
	if rr, ii, ri, ir := matrix("relevant", "relevant"), matrix("irrelevant", "irrelevant"), matrix("relevant", "irrelevant"), matrix("irrelevant", "relevant"); ir != 0 || ri < ok || ri > ok+1 || rr < 2*ok || ii < ok {
		t.Errorf("after %d runs: relevant/relevant %d, irrelevant/irrelevant %d, relevant/irrelevant %d, irrelevant/relevant %d", ok, rr, ii, ri, ir)
	}
	if failed := counterValue(t, h.tel, runs, map[string]string{"outcome": "failed"}); failed != 0 {
		t.Errorf("%d failed runs against a judge that answers", failed)
	}
	// b's CP is 1 by its labels and 1 by the judge ([1, 0]: the relevant
	// chunk first), a's is 1 both ways: no error.
	if sum, _ := floatSum(t, h, "otelcol_processor_ragprecision_canary_cp_abs_error_total", nil); sum != 0 {
		t.Errorf("CP error %v, want 0", sum)
	}
	// The same chunks every run, each time asked again: no cache.
	canaryRequests := counterValue(t, h.tel, metricRequests, map[string]string{"purpose": "canary", "outcome": "ok"})
	judged := counterValue(t, h.tel, "otelcol_processor_ragprecision_canary_retrievals_total", nil)
	if canaryRequests < 2*judged || judged < 4 {
		t.Errorf("%d canary requests for %d retrievals of 2 chunks: the cache answered some", canaryRequests, judged)
	}
	if traffic := counterValue(t, h.tel, metricRequests, map[string]string{"purpose": "traffic", "outcome": "ok"}); traffic != 0 {
		t.Errorf("%d canary requests counted as traffic", traffic)
	}
	h.shutdown(t.Context())
}

// A judge that fails makes the canary's runs fail, and its requests count
// as the canary's errors; nothing else is affected.
func TestCanaryRunFailsWhenTheJudgeFails(t *testing.T) {
	srv := chatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 500} })
	file := canaryFile(t)
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxRetries = 0
		c.Judge.Canary = config.Canary{File: file, Interval: time.Second, MaxRetrievals: 2}
	})
	waitCounter(t, h, "otelcol_processor_ragprecision_canary_runs_total", map[string]string{"outcome": "failed"}, 1)
	if got := counterValue(t, h.tel, metricRequests, map[string]string{"purpose": "canary", "outcome": "error"}); got == 0 {
		t.Error("the canary's failed requests are not counted as its errors")
	}
	h.shutdown(t.Context())
}

// Shutdown ends a canary judgement under way with the judge, at once.
func TestCanaryStopsWithShutdown(t *testing.T) {
	h, bj := newBlockedHarness(t, func(c *config.Config) {
		c.Judge.Canary = config.Canary{File: canaryFile(t), Interval: time.Hour, MaxRetrievals: 1}
		c.ShutdownTimeout = 200 * time.Millisecond
	})
	bj.waitRequests(t, 1) // the canary's first judgement is under way
	start := time.Now()
	h.shutdown(t.Context())
	if took := time.Since(start); took > time.Second {
		t.Errorf("Shutdown took %v with a canary judgement under way", took)
	}
}

// A judge that is slow on, or answers garbage to, the canary's retrievals
// alone never delays a span beyond max_wait nor changes its status: the
// canary takes one of the judge's slots at most, and its failures do not
// open the judge's health breaker. (A judge that is down is the spans'
// judge too: the canary changes nothing there.)
func TestCanaryFaultsLeaveTheSpansAlone(t *testing.T) {
	for _, c := range []struct {
		name   string
		canary chattest.Reply
		delay  time.Duration
	}{
		{"slow", chattest.Reply{Content: `{"verdict": "yes", "reason": "slow"}`}, 3 * time.Second},
		{"garbage", chattest.Reply{Content: "no idea"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			keyword := chattest.KeywordJudge("Paris")
			srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
				if strings.Contains(r.Block("CHUNK"), "Louvre") || strings.Contains(r.Block("CHUNK"), "museum") ||
					strings.Contains(r.Block("CHUNK"), "Berlin is in Germany") {
					time.Sleep(c.delay)
					return c.canary
				}
				return keyword(n, r)
			})
			h := newHarness(t, func(cfg *config.Config) {
				llmJudge(srv.URL)(cfg)
				setMaxWait(cfg, 2*time.Second)
				cfg.Judge.MaxConcurrency = 2
				cfg.Judge.MaxRetries = 0
				cfg.Judge.Canary = config.Canary{File: manyLouvres(t, 12), Interval: time.Second, MaxRetrievals: 12}
			})
			time.Sleep(1500 * time.Millisecond) // the canary is at work, or has failed many times
			for round := range 15 {
				b := newBatch("rag-api")
				b.project(fmt.Sprint("retrieve-", round), question, "Paris", capitalChunks...)
				start := time.Now()
				h.consume(b.td)
				h.waitSpans(round + 1)
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("round %d took %v, beyond max_wait", round, took)
				}
				time.Sleep(100 * time.Millisecond)
			}
			for name, s := range h.spansByName() {
				if attrStr(s, "rag.contextual_precision.status") != "scored" {
					t.Errorf("%s: %v", name, s.Attributes().AsRaw())
				}
			}
			if !h.p.health.healthy() {
				t.Error("the canary's failures opened the judge's breaker")
			}
			if c.delay == 0 {
				if failed := counterValue(t, h.tel, metricRequests, map[string]string{"purpose": "canary", "outcome": "error"}); failed < 20 {
					t.Errorf("%d failed canary requests: too few to have opened the breaker (10 in a row)", failed)
				}
			}
			h.shutdown(t.Context())
		})
	}
}
