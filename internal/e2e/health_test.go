package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// healthConfig runs the processor against a judge nobody listens on, with
// the health_check extension reporting component status (its
// extension.healthcheck.useComponentStatus feature gate and the v2 http
// settings), so that the judge's outage shows on the health endpoint.
const healthConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
  ragprecision:
    judge:
      model: openai:e2e-judge
      base_url: http://127.0.0.1:{{DEAD}}/v1
      api_key: sk-e2e
      max_retries: 0
      max_requests_per_second: 0
exporters:
  debug:
    verbosity: basic
extensions:
  health_check:
    http:
      endpoint: 127.0.0.1:{{HEALTH}}
      status:
        enabled: true
        path: /status
    component_health:
      include_recoverable_errors: true
      recovery_duration: 1ms
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision]
      exporters: [debug]
`

// TestJudgeOutageShowsInHealthCheck: when the judge keeps failing, the
// processor reports a recoverable error to the collector, and the
// health_check extension (with component status) shows it, naming the
// failure.
func TestJudgeOutageShowsInHealthCheck(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	dead := freePort(t) // nothing listens here: every request is refused
	grpcPort, health := freePort(t), freePort(t)
	cfg := render(t, healthConfig, map[string]string{"GRPC": grpcPort, "DEAD": dead, "HEALTH": health})
	path := writeFile(t, t.TempDir(), "health.yaml", cfg)
	// The status endpoint answers 200 from the start: startProcess waits
	// for it.
	p := startProcess(t, "collector", []string{bin, "--config", path, "--feature-gates=+extension.healthcheck.useComponentStatus"},
		nil, "http://127.0.0.1:"+health+"/status")
	status := func() (int, string) {
		resp, err := http.Get("http://127.0.0.1:" + health + "/status?verbose")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// Enough failed judgements to open the judge's breaker.
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint("127.0.0.1:"+grpcPort), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-health"))))
	tr := tp.Tracer("e2e")
	for i := range 12 {
		_, s := tr.Start(ctx, fmt.Sprintf("retrieve %d", i), trace.WithAttributes(
			attribute.String("rag.query", "q"), attribute.String("rag.reference", "Paris"),
			attribute.StringSlice("rag.chunks", []string{fmt.Sprintf("Paris %d", i)})))
		s.End()
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	var body string
	defer func() {
		if t.Failed() {
			t.Logf("last status: %s", body)
		}
	}()
	waitFor(t, 30*time.Second, p, func() bool {
		_, body = status()
		return strings.Contains(body, `"processor:ragprecision":{"healthy":false`)
	})
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("status body %q: %v", body, err)
	}
	proc := findComponent(doc, "processor:ragprecision")
	if proc == nil || proc["healthy"] != false || proc["status"] != "StatusRecoverableError" || !strings.Contains(fmt.Sprint(proc["error"]), "unreachable") || doc["healthy"] != false {
		t.Fatalf("the processor's status does not show the outage: %v\n%s", proc, body)
	}
	t.Logf("health_check shows: %v", proc)
}

// findComponent finds a component's entry in the health_check's verbose
// status document.
func findComponent(doc map[string]any, name string) map[string]any {
	comps, _ := doc["components"].(map[string]any)
	for k, v := range comps {
		m, _ := v.(map[string]any)
		if k == name {
			return m
		}
		if found := findComponent(m, name); found != nil {
			return found
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing the test if the process
// exits or the timeout passes first.
func waitFor(t *testing.T, timeout time.Duration, p *process, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case p.err = <-p.exited:
			p.done = true
			t.Fatalf("%s exited: %v", p.name, p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
