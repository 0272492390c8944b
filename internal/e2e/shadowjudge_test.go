package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/scoring"
)

// A cascade as the primary judge, its LLM alone as the shadow: what the
// operator runs to learn what the cascade costs in agreement on their own
// traffic.
const shadowCollectorConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
  ragprecision:
    sampling_percentage: 100
    max_wait: 10s
    judge:
      model: cascade:openai:e2e-llm
      base_url: {{JUDGE}}
      api_key: sk-primary
      max_requests_per_second: 0
      timeout: 3s
      criteria: "{{CRITERIA}}"
    shadow_judge:
      percentage: 100
      model: openai:e2e-llm
      base_url: {{SHADOW}}
      api_key: sk-shadow
      max_requests_per_second: 0
      timeout: 3s
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
      exporters: [otlp_grpc]
`

// shadowChunks are retrievals whose chunks builtin:lexical is sure of in
// part, so that the cascade decides some chunks itself and asks the LLM the
// rest.
var shadowChunks = [][]string{
	{"Paris is the capital and largest city of France.", "Berlin is the capital of Germany.", "The Eiffel Tower stands in Paris."},
	{"Madrid is the capital of Spain.", "Paris has been the French capital since the Middle Ages.", "Rome is in Italy."},
	{"The capital of France is Paris.", "France borders Spain.", "Lyon is a French city."},
	{"Oslo is in Norway.", "Vienna is the capital of Austria.", "Paris is in France."},
}

// sendRetrievals sends one trace per chunk set, its retrieval span in the
// project dialect, and waits for them at the sink.
func sendRetrievals(t *testing.T, endpoint string, sink *otlpsink.Sink, sets [][]string) {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "shadow-e2e"))))
	tr := tp.Tracer("shadow-e2e")
	before := sink.SpanCount()
	for i, chunks := range sets {
		_, s := tr.Start(ctx, fmt.Sprint("retrieve-", i))
		s.SetAttributes(attribute.String("rag.query", "What is the capital of France?"),
			attribute.String("rag.reference", "Paris"), attribute.StringSlice("rag.chunks", chunks))
		s.End()
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := sink.WaitForSpans(wait, before+len(sets)); err != nil {
		t.Fatalf("%v: %d of %d spans came back", err, sink.SpanCount()-before, len(sets))
	}
}

// spansSince returns the spans the sink received after the first skip.
func spansSince(sink *otlpsink.Sink, skip int) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.Traces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, s)
				}
			}
		}
	}
	return out[skip:]
}

// TestShadowJudgeEndToEnd runs a cascade as the primary judge and its LLM
// alone as the shadow in the built collector: every span carries both
// scores, the shadow's agreement counters equal what the two judges are
// known to have said chunk by chunk, and judge_version is the same after a
// restart with the same configuration and changes with judge.criteria.
func TestShadowJudgeEndToEnd(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	primaryLLM := chattest.NewServer(chattest.KeywordJudge("Paris"))
	defer primaryLLM.Close()
	shadowLLM := chattest.NewServer(chattest.KeywordJudge("Paris"))
	defer shadowLLM.Close()
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	run := func(criteria string) (version string, spans []ptrace.Span, families map[string]float64) {
		ports := map[string]string{"GRPC": freePort(t), "METRICS": freePort(t), "HEALTH": freePort(t),
			"JUDGE": primaryLLM.URL, "SHADOW": shadowLLM.URL, "SINK": sink.Addr(), "CRITERIA": criteria}
		c := launchCollector(t, bin, render(t, shadowCollectorConfig, ports), ports["HEALTH"])
		before := sink.SpanCount()
		sendRetrievals(t, "127.0.0.1:"+ports["GRPC"], sink, shadowChunks)
		spans = spansSince(sink, before)
		version = attr(spans[0], "rag.contextual_precision.judge_version").Str()
		fams := scrape(t, "http://127.0.0.1:"+ports["METRICS"]+"/metrics")
		families = map[string]float64{}
		for _, m := range fams["otelcol_processor_ragprecision_shadow_verdicts_total"].GetMetric() {
			families[label(m, "verdict")+"/"+label(m, "shadow_verdict")] += m.GetCounter().GetValue()
		}
		c.stop(t)
		return version, spans, families
	}

	version, spans, agreement := run("")
	want := map[string]float64{}
	for _, s := range spans {
		if got := attr(s, "rag.contextual_precision.status").Str(); got != "scored" {
			t.Fatalf("%s: status %q", s.Name(), got)
		}
		if attr(s, "rag.contextual_precision.judge").Str() != "cascade:openai:e2e-llm" || attr(s, "rag.contextual_precision.shadow_judge").Str() != "openai:e2e-llm" {
			t.Errorf("%s: judges %v", s.Name(), s.Attributes().AsRaw())
		}
		chunks := attr(s, "rag.chunks").Slice()
		primary := attr(s, "rag.contextual_precision.verdicts").Slice()
		shadowVerdicts := make([]bool, chunks.Len())
		for i := range chunks.Len() {
			shadowVerdicts[i] = strings.Contains(chunks.At(i).Str(), "Paris") // the keyword judge's rule
			key := fmt.Sprintf("%s/%s", relevance(primary.At(i).Bool()), relevance(shadowVerdicts[i]))
			want[key]++
		}
		wantCP, _ := scoring.ContextualPrecision(shadowVerdicts, 0)
		if got := attr(s, "rag.contextual_precision.shadow"); got.Type() != pcommon.ValueTypeDouble || math.Abs(got.Double()-wantCP.Value) > 1e-12 {
			t.Errorf("%s: shadow score %v, want %v", s.Name(), got.AsRaw(), wantCP.Value)
		}
	}
	for k, n := range want {
		if agreement[k] != n {
			t.Errorf("shadow_verdicts_total{verdict/shadow_verdict=%s} = %v, want %v (all: %v)", k, agreement[k], n, agreement)
		}
	}
	t.Logf("cascade vs its LLM on %d spans: %v", len(spans), agreement)

	if again, _, _ := run(""); again != version {
		t.Errorf("judge_version %s after a restart with the same configuration, %s before", again, version)
	}
	if changed, _, _ := run("must name the city"); changed == version {
		t.Errorf("judge_version %s unchanged by judge.criteria", changed)
	}
}

func attr(s ptrace.Span, key string) pcommon.Value {
	v, _ := s.Attributes().Get(key)
	return v
}

func relevance(v bool) string {
	if v {
		return "relevant"
	}
	return "irrelevant"
}
