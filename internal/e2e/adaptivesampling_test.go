package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// adaptivePipeline is the collector of this file's tests: OTLP in, the
// processor configured as given, OTLP out to the test's sink.
func adaptivePipeline(processor string) string {
	return strings.Replace(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
{{PROCESSOR}}
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
      processors: [ragprecision]
      exporters: [otlp_grpc]
`, "{{PROCESSOR}}", strings.TrimRight(processor, "\n"), 1)
}

var adaptiveConfig = adaptivePipeline(`  ragprecision:
    attributes: {data_source: app.index}
    adaptive_sampling:
      enabled: true
      judge_requests_per_second: 20
      min_judged_per_hour: 100
      min_percentage: 0.1
      adjust_interval: 1s
    product_metrics: {endpoint: "127.0.0.1:{{PRODUCT}}"}
`)

// adaptive_sampling through the built collector: a busy and a rare data
// source (1 in 100) get their own percentages, the rare one the higher
// (its owed minimum first); every scored span carries the rate it was
// selected at, and rag_contextual_precision_weight_total is Σ 1/rate of
// the scored spans.
func TestAdaptiveSamplingEndToEnd(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	grpc, health, product := freePort(t), freePort(t), freePort(t)
	cfg := render(t, adaptiveConfig, map[string]string{"GRPC": grpc, "HEALTH": health, "PRODUCT": product, "SINK": sink.Addr()})
	c := launchCollector(t, bin, cfg, health)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint("127.0.0.1:"+grpc), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(50*time.Millisecond), sdktrace.WithMaxQueueSize(4096), sdktrace.WithBlocking()),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-adaptive"))))
	tr := tp.Tracer("e2e")
	sent := 0
	send := func(n int) {
		for i := range n {
			ds := "busy"
			if i%100 == 0 {
				ds = "rare"
			}
			_, s := tr.Start(ctx, fmt.Sprintf("retrieve %d", sent), trace.WithAttributes(
				attribute.String("app.index", ds),
				attribute.String("rag.query", "What is the capital of France?"),
				attribute.String("rag.reference", "Paris"),
				stringSlice("Paris is the capital of France.", "Berlin is the capital of Germany.", "The Louvre is in Paris.")))
			s.End()
			sent++
		}
		if err := tp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Three intervals of traffic, so that the rates adjust to it.
	for range 3 {
		send(3000)
		time.Sleep(1200 * time.Millisecond)
	}
	send(3000)
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if n, err := sink.WaitForSpans(waitCtx, sent); err != nil {
		t.Fatalf("%d of %d spans arrived: %v", n, sent, err)
	}

	families := scrape(t, "http://127.0.0.1:"+product+"/metrics")
	pct := map[string]float64{}
	for _, ds := range []string{"busy", "rare"} {
		v, ok := counter(families, "rag_sampling_percentage", map[string]string{"data_source": ds})
		if !ok || v <= 0 || v > 100 {
			t.Fatalf("rag_sampling_percentage{data_source=%q} = %v (found %v)", ds, v, ok)
		}
		pct[ds] = v
	}
	if !(pct["rare"] > pct["busy"]) || pct["busy"] == 100 {
		t.Errorf("percentages %v: want rare above busy, busy below 100", pct)
	}
	weights := map[string]float64{}
	scored := map[string]int{}
	for _, td := range sink.Traces() {
		forEachSpanOf(td, func(s ptrace.Span) {
			rate, ok := s.Attributes().Get("rag.contextual_precision.sample_rate")
			if !ok {
				return
			}
			ds, _ := s.Attributes().Get("app.index")
			if r := rate.Double(); r <= 0 || r > 1 {
				t.Errorf("%s: sample_rate %v", s.Name(), r)
			} else {
				weights[ds.Str()] += 1 / rate.Double()
				scored[ds.Str()]++
			}
		})
	}
	t.Logf("percentages %v; scored %v of %d sent; Σ 1/rate %v", pct, scored, sent, weights)
	for ds, w := range weights {
		got, _ := counter(families, "rag_contextual_precision_weight_total", map[string]string{"data_source": ds})
		if math.Abs(got-w) > 1e-6*w {
			t.Errorf("weight_total{%s} = %v, want Σ 1/sample_rate = %v", ds, got, w)
		}
	}
	if scored["busy"] == 0 || scored["busy"] >= sent {
		t.Errorf("busy: %d scored of %d sent: not sampled", scored["busy"], sent)
	}
	c.stop(t)
}

var adaptiveBurstConfig = adaptivePipeline(`  ragprecision:
    attributes: {data_source: app.index}
    max_wait: 10s
    judge:
      model: openai:e2e-llm
      base_url: {{JUDGE}}
      api_key: sk-e2e
      mode: batched
      max_requests_per_second: 50
      timeout: 3s
    adaptive_sampling:
      enabled: true
      judge_requests_per_second: 40
      min_judged_per_hour: {{MIN}}
      min_percentage: 0.01
      adjust_interval: 1s
`)

// adaptive_sampling through the built collector with an LLM judge and its
// budget, over a compressed burst: 100 retrievals a second, 1,000 for ten
// seconds, 100 again, and a rare data source at 1 a second, at a spend of
// 40 requests a second (a span each) against a budget of 50, so that a
// share of 1% is a dozen spans, not one. Under 1% of the selected spans
// pass with status budget (docs/OPERATING.md: a span waits for the
// budget's refill, and the spend is held to what bucket and wait absorb),
// and the rare source
// is judged at least its min_judged_per_hour, scaled to the run.
func TestAdaptiveSamplingEndToEndBurst(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	judgeSrv := chattest.NewServer(chattest.KeywordJudge("Paris"))
	defer judgeSrv.Close()
	const minPerHour = 1800 // half a span a second
	grpc, health := freePort(t), freePort(t)
	cfg := render(t, adaptiveBurstConfig, map[string]string{"GRPC": grpc, "HEALTH": health, "SINK": sink.Addr(),
		"JUDGE": judgeSrv.URL, "MIN": fmt.Sprint(minPerHour)})
	c := launchCollector(t, bin, cfg, health)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint("127.0.0.1:"+grpc), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(50*time.Millisecond), sdktrace.WithMaxQueueSize(8192), sdktrace.WithBlocking()),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-adaptive-burst"))))
	tr := tp.Tracer("e2e")
	sent := 0
	emit := func(ds string) {
		_, s := tr.Start(ctx, fmt.Sprintf("retrieve %d", sent), trace.WithAttributes(
			attribute.String("app.index", ds),
			attribute.String("rag.query", fmt.Sprintf("What is the capital of France? (%d)", sent)),
			attribute.String("rag.reference", "Paris"),
			stringSlice(fmt.Sprintf("Paris is the capital of France (%d).", sent), "Berlin is the capital of Germany.", "The Louvre is in Paris.")))
		s.End()
		sent++
	}
	// Tenths of a second: 15 s quiet, 10 s of burst, 10 s quiet.
	const tick = 100 * time.Millisecond
	start := time.Now()
	for i := range 350 {
		busy := 10
		if i >= 150 && i < 250 {
			busy = 100
		}
		for range busy {
			emit("busy")
		}
		if i%10 == 0 {
			emit("rare")
		}
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * tick)))
	}
	elapsed := time.Since(start)
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if n, err := sink.WaitForSpans(waitCtx, sent); err != nil {
		t.Fatalf("%d of %d spans arrived: %v", n, sent, err)
	}
	statuses := map[string]map[string]int{}
	for _, td := range sink.Traces() {
		forEachSpanOf(td, func(s ptrace.Span) {
			st, ok := s.Attributes().Get("rag.contextual_precision.status")
			if !ok {
				return
			}
			ds, _ := s.Attributes().Get("app.index")
			if statuses[ds.Str()] == nil {
				statuses[ds.Str()] = map[string]int{}
			}
			statuses[ds.Str()][st.Str()]++
		})
	}
	selected, refused := 0, 0
	for _, byStatus := range statuses {
		for st, n := range byStatus {
			selected += n
			if st == "budget" {
				refused += n
			}
		}
	}
	t.Logf("%d sent in %s; statuses %v; %d judge requests", sent, elapsed.Round(time.Millisecond), statuses, judgeSrv.Calls())
	if selected < 500 || float64(refused) >= 0.01*float64(selected) {
		t.Errorf("%d of %d selected spans with status budget, want under 1%%", refused, selected)
	}
	// Owed half a span a second, less the first adjust interval, at which
	// every series starts at min_percentage; three standard deviations of
	// the count below that is too few.
	owed := float64(minPerHour) / 3600 * (elapsed.Seconds() - 1)
	if got := float64(statuses["rare"]["scored"]); got < owed-3*math.Sqrt(owed) {
		t.Errorf("rare source judged %v times, owed %.1f", got, owed)
	}
	c.stop(t)
}
