package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/promcheck"
)

// driftScale runs the rules 720 times faster than written: the canary's
// 6-hour window is 30s, its week-long baseline longer than the test, and
// RAGJudgeDrifted's for: 1h is 5s; the canary's production interval of an
// hour is 5s.
const driftScale = "1/720"

// The drift test's collector: an LLM judge, no traffic at all (sampling
// 0%), and the canary, which proves the judge works, or not, on its own.
// Each retrieval gets its slot of the interval (5s / 20 = 250 ms) to be
// judged in; with 50 a slot of 100 ms failed runs, and fired
// RAGJudgeCanaryFailing, while the other end-to-end tests loaded the
// machine. 20 retrievals of 5 chunks a run still give the rules' 6 hours
// (30s here) 600 verdicts, above their guard of 150.
const driftCollectorConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
  ragprecision:
    sampling_percentage: 0
    judge:
      model: openai:drifting-judge
      base_url: {{JUDGE}}
      api_key: sk-drift
      max_requests_per_second: 0
      max_retries: 0
      timeout: 2s
      canary:
        file: {{CANARY}}
        interval: 5s
        max_retrievals: 20
exporters:
  debug:
    verbosity: basic
extensions:
  health_check:
    endpoint: 127.0.0.1:{{HEALTH}}
service:
  extensions: [health_check]
  telemetry:
    logs:
      level: warn
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{METRICS}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision]
      exporters: [debug]
`

// keywordCanary writes a canary file of n retrievals of 5 chunks, labelled
// relevant exactly when they mention trafficKeyword, as the keyword judge
// decides.
func keywordCanary(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "r%d", "query": "What is the capital of France?", "reference": %q, "chunks": [`, i, trafficKeyword)
		for c := range 5 {
			if c > 0 {
				b.WriteString(", ")
			}
			relevant := (i+c)%2 == 0
			text := fmt.Sprintf("Berlin is in Germany (note %d.%d).", i, c)
			if relevant {
				text = fmt.Sprintf("%s is the capital of France (note %d.%d).", trafficKeyword, i, c)
			}
			fmt.Fprintf(&b, `{"text": %q, "relevant": %v}`, text, relevant)
		}
		b.WriteString("]}\n")
	}
	path := filepath.Join(t.TempDir(), "canary.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// driftingJudge answers like the keyword judge until it is told to drift,
// then at random: the same model name, another behaviour, as when a
// provider updates a model behind its name.
type driftingJudge struct {
	drifting atomic.Bool
	mu       sync.Mutex
	rnd      *rand.Rand
}

func (d *driftingJudge) handle(n int, r chattest.Request) chattest.Reply {
	if !d.drifting.Load() {
		return chattest.KeywordJudge(trafficKeyword)(n, r)
	}
	d.mu.Lock()
	yes := d.rnd.IntN(2) == 0
	d.mu.Unlock()
	verdict := "no"
	if yes {
		verdict = "yes"
	}
	return chattest.Reply{Content: fmt.Sprintf(`{"verdict": %q, "reason": "a coin"}`, verdict)}
}

// TestPrometheusJudgeDriftLive runs the canary against a judge that turns
// unreliable part-way, with the rules (scaled by driftScale) in a real
// Prometheus: while the judge is steady no alert fires; once it answers at
// random, the canary's agreement falls and RAGJudgeDrifted goes pending,
// then firing, saying that the judge changed.
func TestPrometheusJudgeDriftLive(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	promBin := prometheusBinary(t)
	judge := &driftingJudge{rnd: rand.New(rand.NewPCG(1, 2))}
	srv := chattest.NewServer(judge.handle)
	defer srv.Close()
	ports := map[string]string{"GRPC": freePort(t), "METRICS": freePort(t), "HEALTH": freePort(t),
		"JUDGE": srv.URL, "CANARY": keywordCanary(t, 20)}
	c := launchCollector(t, bin, render(t, driftCollectorConfig, ports), ports["HEALTH"])
	defer c.stop(t)

	rulesData, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	factor, err := promcheck.ParseFactor(driftScale)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := promcheck.ScaleRules(rulesData, factor)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := promcheck.ParseRules(scaled)
	if err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, promBin, scrapeConfig([]string{"127.0.0.1:" + ports["METRICS"]}, "ragprecision.rules.yml"),
		map[string][]byte{"ragprecision.rules.yml": scaled})
	prom.waitTargetsUp(t)

	// A steady judge: the baseline fills, and nothing fires.
	start := time.Now()
	for time.Since(start) < 60*time.Second {
		alerts, err := prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			t.Errorf("%s went %s with a steady judge (value %s, labels %v)", a.Labels["alertname"], a.State, a.Value, a.Labels)
		}
		if t.Failed() {
			t.FailNow()
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Every canary rule and panel has data, the baseline week's included.
	checkLiveData(t, prom, onlyExprs(liveExpressions(t, rules), regexp.MustCompile(`(?i)canary`)))
	steady := prom.value(t, `sum(judge_model_judge_version:ragprecision_canary:accuracy6h)`)
	t.Logf("steady judge: canary agreement over the (scaled) 6 hours %.3f", steady)

	// The judge turns unreliable, under the same name.
	judge.drifting.Store(true)
	changed := time.Now()
	var pendingAfter, firingAfter time.Duration
	for firingAfter == 0 && time.Since(changed) < 90*time.Second {
		alerts, err := prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.Labels["alertname"] != "RAGJudgeDrifted" {
				if a.Labels["alertname"] != "RAGJudgeCanaryFailing" {
					t.Logf("also %s: %s %v", a.Labels["alertname"], a.State, a.Labels)
				}
				continue
			}
			switch {
			case a.State == "pending" && pendingAfter == 0:
				pendingAfter = time.Since(changed)
			case a.State == "firing":
				firingAfter = time.Since(changed)
				if !strings.Contains(a.Annotations["description"], "the judge did") {
					t.Errorf("the description does not say the judge changed: %q", a.Annotations["description"])
				}
				if a.Labels["judge_model"] != "openai:drifting-judge" {
					t.Errorf("alert on %v", a.Labels)
				}
				t.Logf("RAGJudgeDrifted fired: %q", a.Annotations["summary"])
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	switch {
	case firingAfter == 0:
		t.Fatalf("RAGJudgeDrifted did not fire within 90s of the judge's change (pending after %v)", pendingAfter)
	case pendingAfter == 0:
		t.Errorf("RAGJudgeDrifted fired after %v without being seen pending first", firingAfter)
	}
	drifted := prom.value(t, `sum(judge_model_judge_version:ragprecision_canary:accuracy6h)`)
	t.Logf("scale %s: RAGJudgeDrifted pending %.1fs and firing %.1fs after the judge began to answer at random; canary agreement %.3f before, %.3f after",
		driftScale, pendingAfter.Seconds(), firingAfter.Seconds(), steady, drifted)
}
