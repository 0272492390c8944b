package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// TestTailSamplingExample validates deploy/tail-sampling/config.yaml and
// shows why its decision_wait is what it is: ragprecision in front of
// tail_sampling, a policy that keeps the traces whose retrieval failed, and
// an LLM judge that takes its time. With decision_wait shorter than the
// judge, the sampler decides before the score arrives and the failed
// retrievals are lost; with decision_wait above max_wait, every one is kept.
// The distribution has the tail_sampling processor (builder-config.yaml)
// for this: a build without it fails the test rather than skip it.

// tailSamplingConfig: retrievals held up to max_wait (5s) by a judge that
// answers each chunk after 2.5s; the sampler keeps failed retrievals only.
// (The sampler decides on a one-second tick, a trace in the first or second
// tick after its decision_wait: decision_wait is whole seconds, at least 1.)
const tailSamplingConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
  ragprecision:
    max_wait: 5s
    judge:
      model: openai:e2e-judge
      base_url: {{JUDGE}}
      api_key: sk-e2e
      timeout: 4s
      max_retries: 0
      max_concurrency: 16
      max_requests_per_second: 0
  tail_sampling:
    decision_wait: {{DECISION_WAIT}}
    policies:
      - name: failed-retrievals
        type: boolean_attribute
        boolean_attribute:
          key: rag.contextual_precision.passed
          value: false
exporters:
  otlp_grpc:
    endpoint: {{SINK}}
    tls:
      insecure: true
extensions:
  health_check:
    endpoint: 127.0.0.1:{{HEALTH}}
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision, tail_sampling]
      exporters: [otlp_grpc]
`

func TestTailSamplingExample(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	out, err := exec.Command(bin, "components").CombinedOutput()
	if err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "name: tail_sampling") {
		t.Fatalf("the distribution has no tail_sampling processor: builder-config.yaml must list github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor\n%s", out)
	}
	example := filepath.Join(repoRoot(t), "deploy", "tail-sampling", "config.yaml")
	validate := exec.Command(bin, "validate", "--config", example)
	validate.Env = append(os.Environ(), "OPENAI_API_KEY=sk-example", "OTLP_BACKEND=localhost:4317")
	if out, err := validate.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", example, err, out)
	}

	judge := chattest.NewServer(func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = 2500 * time.Millisecond
		return rep
	})
	t.Cleanup(judge.Close) // after the parallel subtests, unlike a defer
	const traces = 5
	for _, c := range []struct {
		decisionWait string
		wantKept     bool
	}{
		{"1s", false}, // decided (1-2s) before the judge answers (2.5s)
		{"6s", true},  // max_wait (5s) + 1s
	} {
		t.Run("decision_wait_"+c.decisionWait, func(t *testing.T) {
			t.Parallel()
			sink, err := otlpsink.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer sink.Stop()
			grpc, health := freePort(t), freePort(t)
			cfg := render(t, tailSamplingConfig, map[string]string{"GRPC": grpc, "HEALTH": health,
				"JUDGE": judge.URL, "SINK": sink.Addr(), "DECISION_WAIT": c.decisionWait})
			p := startProcess(t, "collector", []string{bin, "--config", writeFile(t, t.TempDir(), "config.yaml", cfg)},
				nil, "http://127.0.0.1:"+health+"/")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := newOTLPSender(t, "127.0.0.1:"+grpc).send(ctx, failedRetrievals(traces)); err != nil {
				t.Fatal(err)
			}
			// Long enough for the decision and for every held span.
			waitCtx, waitCancel := context.WithTimeout(ctx, 8*time.Second)
			defer waitCancel()
			_, _ = sink.WaitForSpans(waitCtx, 3*traces)
			p.stop(t)

			kept := 0
			for _, a := range arrivals(sink) {
				if a.name == "retrieve" && a.status == "scored" {
					kept++
				}
			}
			t.Logf("decision_wait %s, judge 2.5s a chunk, max_wait 5s: %d of %d failed retrievals kept (%d spans)", c.decisionWait, kept, traces, sink.SpanCount())
			if c.wantKept && (kept != traces || sink.SpanCount() != 3*traces) {
				t.Errorf("kept %d of %d failed retrievals, %d of %d spans", kept, traces, sink.SpanCount(), 3*traces)
			}
			if !c.wantKept && kept == traces {
				t.Errorf("every failed retrieval was kept although the sampler decided before the judge answered: docs/DEPLOYING.md's advice would be wrong")
			}
		})
	}
}

// failedRetrievals is n traces of three spans, sent together, whose
// retrieval ranks the only relevant chunk last (CP 1/3: not passed). The
// chunks differ by trace, so that no verdict comes from the cache.
func failedRetrievals(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "e2e-tail")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		tid := pcommon.TraceID{byte(i + 1), 0xa1}
		root := spans.AppendEmpty()
		root.SetTraceID(tid)
		root.SetSpanID(pcommon.SpanID{byte(i + 1), 1})
		root.SetName("ask")
		r := spans.AppendEmpty()
		r.SetTraceID(tid)
		r.SetSpanID(pcommon.SpanID{byte(i + 1), 2})
		r.SetParentSpanID(root.SpanID())
		r.SetName("retrieve")
		r.Attributes().PutStr("rag.query", "What is the capital of France?")
		r.Attributes().PutStr("rag.reference", "Paris")
		chunks := r.Attributes().PutEmptySlice("rag.chunks")
		for _, c := range []string{"Madrid is the capital of Spain.", "Rome is the capital of Italy.", "Paris is the capital of France."} {
			chunks.AppendEmpty().SetStr(fmt.Sprintf("%s (%d)", c, i))
		}
		plain := spans.AppendEmpty()
		plain.SetTraceID(tid)
		plain.SetSpanID(pcommon.SpanID{byte(i + 1), 3})
		plain.SetParentSpanID(root.SpanID())
		plain.SetName("render")
	}
	return td
}
