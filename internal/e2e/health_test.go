package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// healthGate is the feature gate examples/health-check.yaml needs.
const healthGate = "--feature-gates=+extension.healthcheck.useComponentStatus"

// TestJudgeOutageShowsInHealthCheck runs examples/health-check.yaml — the
// safe health-check configuration docs/DEPLOYING.md shows — against a judge
// nobody listens on (the file's addresses and judge overridden on the
// command line, the file itself as users copy it). When the judge keeps
// failing, the processor reports a recoverable error: the status instance
// must show it, naming the failure, with a 500, while the probes' instance
// keeps answering 200.
func TestJudgeOutageShowsInHealthCheck(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	dead := freePort(t) // nothing listens here: every request is refused
	grpcPort, probes, statusPort := freePort(t), freePort(t), freePort(t)
	example := filepath.Join(repoRoot(t), "examples", "health-check.yaml")
	args := []string{bin, "--config", example, healthGate}
	for _, set := range []string{
		"receivers::otlp::protocols::grpc::endpoint: 127.0.0.1:" + grpcPort,
		"extensions::health_check/probes::http::endpoint: 127.0.0.1:" + probes,
		"extensions::health_check/status::http::endpoint: 127.0.0.1:" + statusPort,
		"extensions::health_check/status::component_health::recovery_duration: 1ms",
		"processors::ragprecision::judge::base_url: http://127.0.0.1:" + dead + "/v1",
		"processors::ragprecision::judge::max_retries: 0",
		"processors::ragprecision::judge::max_requests_per_second: 0",
		"exporters::debug::verbosity: basic",
		"service::telemetry::metrics::level: none",
	} {
		args = append(args, "--config", "yaml:"+set)
	}
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	probeURL := "http://127.0.0.1:" + probes + "/"
	statusURL := "http://127.0.0.1:" + statusPort + "/status?verbose"
	// The probes' endpoint answers 200 from the start: startProcess waits
	// for it.
	p := startProcess(t, "collector", args, []string{"OPENAI_API_KEY=sk-e2e"}, probeURL)

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

	var code int
	var body string
	defer func() {
		if t.Failed() {
			t.Logf("last status: %d %s", code, body)
		}
	}()
	waitFor(t, 30*time.Second, p, func() bool {
		code, body = get(statusURL)
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
	if code != http.StatusInternalServerError {
		t.Errorf("the status endpoint answers %d during the outage, want 500", code)
	}
	// The outage is still on (nothing listens on the judge's port): the
	// probes' endpoint must not take the collector out over it.
	if probeCode, probeBody := get(probeURL); probeCode != http.StatusOK {
		t.Errorf("the probes' endpoint answers %d during the judge outage, want 200: %s", probeCode, probeBody)
	}
	if code, body := get(statusURL); code != http.StatusInternalServerError {
		t.Errorf("the outage ended during the test (status %d): the probe check proves nothing\n%s", code, body)
	}
	t.Logf("health_check/status shows: %v; health_check/probes answers 200", proc)
}

// TestHealthCheckDocsQuoteTheExample: the health-check configuration
// docs/DEPLOYING.md shows is examples/health-check.yaml's (which
// TestExampleConfigsValidate validates and TestJudgeOutageShowsInHealthCheck
// runs), and `make validate` accepts that file with the command the docs
// give.
func TestHealthCheckDocsQuoteTheExample(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	example, err := os.ReadFile(filepath.Join(root, "examples", "health-check.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "DEPLOYING.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := 0
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if !strings.Contains(block[1], "health_check/probes") {
			continue
		}
		quoted++
		// Each paragraph of the snippet is a piece of the file, verbatim.
		for _, part := range strings.Split(strings.TrimSpace(block[1]), "\n\n") {
			if !strings.Contains(string(example), part+"\n") {
				t.Errorf("docs/DEPLOYING.md shows\n%s\nwhich examples/health-check.yaml does not hold", part)
			}
		}
	}
	if quoted != 1 {
		t.Errorf("docs/DEPLOYING.md has %d yaml blocks with health_check/probes, want 1", quoted)
	}
	validate := "make validate CONFIG=examples/health-check.yaml ARGS=" + healthGate
	if !strings.Contains(string(doc), validate) {
		t.Fatalf("docs/DEPLOYING.md does not give %q", validate)
	}
	bin := collectorBinary(t)
	// The binary given, never rebuilt (-o): only the validate recipe runs.
	make := exec.Command("make", "--no-print-directory", "-o", bin, "validate", "COLLECTOR="+bin,
		"CONFIG=examples/health-check.yaml", "ARGS="+healthGate)
	make.Dir = root
	make.Env = append(os.Environ(), "OPENAI_API_KEY=sk-example")
	out, err := make.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "examples/health-check.yaml is valid") {
		t.Errorf("%s: %v\n%s", validate, err, out)
	}
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
