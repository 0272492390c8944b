// Package e2e runs the built otelcol-ragprecision distribution as users run
// it: a real process, configured by YAML, fed over OTLP/gRPC and OTLP/HTTP by
// the OpenTelemetry Go SDK, judging through a local Chat Completions server,
// exporting to a local OTLP endpoint and exposing Prometheus metrics. `make
// e2e` (part of `make test`) builds the binary and runs it.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

const collectorEnv = "RAGPRECISION_COLLECTOR"

// collectorBinary returns the distribution $RAGPRECISION_COLLECTOR names
// (see requiredBinary).
func collectorBinary(t *testing.T) string {
	t.Helper()
	return requiredBinary(t, collectorEnv, "the distribution")
}

// The judge calls a chunk relevant when it mentions Paris; chunks that
// mention "slowly" are answered after a delay, to have judgements in flight
// when the collector is told to stop.
func judgeHandler(n int, r chattest.Request) chattest.Reply {
	rep := chattest.KeywordJudge("Paris")(n, r)
	if strings.Contains(r.Block("CHUNK"), "slowly") {
		rep.Delay = 3 * time.Second
	}
	return rep
}

const configTemplate = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
      http:
        endpoint: 127.0.0.1:{{HTTP}}
processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  ragprecision:
    sampling_percentage: 100
    threshold: 0.7
    max_wait: 10s
    trace_join:
      enabled: true
      wait: 3s
    judge:
      model: openai:e2e-judge
      base_url: {{JUDGE}}
      api_key: ${env:E2E_JUDGE_API_KEY}
      max_requests_per_second: 0
      max_retries: 1
      timeout: 4s
  batch:
    timeout: 100ms
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
    logs:
      level: info
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{METRICS}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, ragprecision, batch]
      exporters: [otlp_grpc]
`

// freePort returns a port free on 127.0.0.1 (see freePortOn).
func freePort(t *testing.T) string {
	t.Helper()
	return freePortOn(t, "127.0.0.1")
}

// collector is the distribution running as a child process, with the
// ports its configuration was given.
type collector struct {
	*process
	metrics string
	health  string
	grpc    string
	http    string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// endToEndConfig is configTemplate on free ports, judging at judgeURL and
// exporting to sinkAddr; ports holds the ports it was given.
func endToEndConfig(t *testing.T, judgeURL, sinkAddr string) (ports collector, config string) {
	t.Helper()
	ports = collector{grpc: freePort(t), http: freePort(t), metrics: freePort(t), health: freePort(t)}
	return ports, render(t, configTemplate, map[string]string{"GRPC": ports.grpc, "HTTP": ports.http, "JUDGE": judgeURL,
		"SINK": sinkAddr, "HEALTH": ports.health, "METRICS": ports.metrics})
}

func startCollector(t *testing.T, bin, judgeURL, sinkAddr string) *collector {
	t.Helper()
	ports, cfg := endToEndConfig(t, judgeURL, sinkAddr)
	c := launchCollector(t, bin, cfg, ports.health, "E2E_JUDGE_API_KEY=sk-e2e-secret")
	c.grpc, c.http, c.metrics = ports.grpc, ports.http, ports.metrics
	return c
}

// launchCollector runs the distribution with a configuration's text and
// waits for its health check on 127.0.0.1:health.
func launchCollector(t *testing.T, bin, config, health string, env ...string) *collector {
	t.Helper()
	path := writeFile(t, t.TempDir(), "config.yaml", config)
	p := startProcess(t, "collector", []string{bin, "--config", path}, env, "http://127.0.0.1:"+health+"/")
	return &collector{process: p, health: health}
}

// sent describes a retrieval span the test sends and what must come back.
type sent struct {
	name      string
	verdicts  []bool
	cp        float64
	passed    bool
	refSource string
	service   string
}

func stringSlice(vals ...string) attribute.KeyValue {
	return attribute.StringSlice("rag.chunks", vals)
}

// sendGRPC sends project-dialect traces over OTLP/gRPC: a good ranking, a
// bad one, and plain spans around them.
func sendGRPC(ctx context.Context, t *testing.T, endpoint string) (spans int, want []sent) {
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-grpc"))))
	tr := tp.Tracer("e2e")
	retrieval := func(name string, chunks ...string) {
		ctx, root := tr.Start(ctx, "ask "+name)
		_, s := tr.Start(ctx, name, trace.WithAttributes(
			attribute.String("rag.query", "What is the capital of France?"),
			attribute.String("rag.reference", "Paris"),
			stringSlice(chunks...)))
		s.End()
		_, plain := tr.Start(ctx, "render "+name, trace.WithAttributes(attribute.String("http.route", "/ask")))
		plain.End()
		root.End()
		spans += 3
	}
	retrieval("good-ranking", "Paris is the capital of France.", "Berlin is the capital of Germany.", "The Louvre is in Paris.")
	want = append(want, sent{"good-ranking", []bool{true, false, true}, 5.0 / 6.0, true, "reference", "e2e-grpc"})
	retrieval("bad-ranking", "Madrid is the capital of Spain.", "Rome is the capital of Italy.", "Paris is the capital of France.")
	want = append(want, sent{"bad-ranking", []bool{false, false, true}, 1.0 / 3.0, false, "reference", "e2e-grpc"})
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return spans, want
}

// sendHTTP sends an OpenInference trace over OTLP/HTTP whose reference is
// the root span's answer (trace_join), and one whose judgement is slow.
func sendHTTP(ctx context.Context, t *testing.T, endpoint string) (spans int, want []sent) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-http"))))
	tr := tp.Tracer("e2e")
	retriever := func(name, answer string, docs ...string) {
		ctx, root := tr.Start(ctx, "chain "+name, trace.WithAttributes(
			attribute.String("openinference.span.kind", "CHAIN"),
			attribute.String("input.value", "Where is the Louvre?")))
		attrs := []attribute.KeyValue{
			attribute.String("openinference.span.kind", "RETRIEVER"),
			attribute.String("input.value", "Where is the Louvre?"),
		}
		for i, d := range docs {
			attrs = append(attrs, attribute.String(fmt.Sprintf("retrieval.documents.%d.document.content", i), d))
		}
		_, s := tr.Start(ctx, name, trace.WithAttributes(attrs...))
		s.End()
		root.SetAttributes(attribute.String("output.value", answer))
		root.End()
		spans += 2
	}
	retriever("openinference", "The Louvre is in Paris.", "Oslo is in Norway.", "The Louvre museum is in Paris.")
	want = append(want, sent{"openinference", []bool{false, true}, 0.5, false, "answer", "e2e-http"})
	retriever("slow-judgement", "It is in Paris.", "Paris, slowly.")
	want = append(want, sent{"slow-judgement", []bool{true}, 1, true, "answer", "e2e-http"})
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return spans, want
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	judge := chattest.NewServer(judgeHandler)
	defer judge.Close()
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	c := startCollector(t, bin, judge.URL, sink.Addr())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nGRPC, wantGRPC := sendGRPC(ctx, t, "127.0.0.1:"+c.grpc)
	nHTTP, wantHTTP := sendHTTP(ctx, t, "127.0.0.1:"+c.http)
	total := nGRPC + nHTTP
	want := append(wantGRPC, wantHTTP...)

	// Everything but the slow judgement arrives while the collector runs.
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if n, err := sink.WaitForSpans(waitCtx, total-1); err != nil {
		t.Fatalf("%d of %d spans arrived: %v", n, total, err)
	}
	checkMetrics(t, "http://127.0.0.1:"+c.metrics+"/metrics", want[:3])

	// SIGTERM with the slow judgement in flight: it must still come out.
	c.stop(t)
	if got := sink.SpanCount(); got != total {
		t.Fatalf("%d spans arrived, %d sent", got, total)
	}
	checkSpans(t, sink.Traces(), want)
	checkJudgeRequests(t, judge)
	for _, secret := range []string{"sk-e2e-secret", "Paris is the capital of France.", "What is the capital of France?", "The Louvre is in Paris."} {
		if strings.Contains(c.log.String(), secret) {
			t.Fatalf("the collector's log contains %q: secrets and span content must stay out of it", secret)
		}
	}
}

func checkSpans(t *testing.T, all []ptrace.Traces, want []sent) {
	t.Helper()
	byName := map[string]ptrace.Span{}
	services := map[string]string{}
	seen := map[string]int{}
	for _, td := range all {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					byName[s.Name()] = s
					services[s.Name()] = svc.Str()
					seen[s.Name()]++
				}
			}
		}
	}
	retrievals := map[string]bool{}
	for _, w := range want {
		retrievals[w.name] = true
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("span %q arrived %d times", name, n)
		}
		if _, ok := byName[name].Attributes().Get("rag.contextual_precision.status"); ok && !retrievals[name] {
			t.Errorf("non-retrieval span %q was annotated", name)
		}
	}
	for _, w := range want {
		s, ok := byName[w.name]
		if !ok {
			t.Errorf("retrieval span %q did not arrive", w.name)
			continue
		}
		a := s.Attributes()
		get := func(k string) pcommon.Value { v, _ := a.Get(k); return v }
		if st := get("rag.contextual_precision.status").Str(); st != "scored" {
			t.Errorf("%s: status %q", w.name, st)
			continue
		}
		if cp := get("rag.contextual_precision").Double(); math.Abs(cp-w.cp) > 1e-9 {
			t.Errorf("%s: CP %v, want %v", w.name, cp, w.cp)
		}
		if got := get("rag.contextual_precision.passed").Bool(); got != w.passed {
			t.Errorf("%s: passed %v", w.name, got)
		}
		var verdicts []bool
		for _, v := range get("rag.contextual_precision.verdicts").Slice().All() {
			verdicts = append(verdicts, v.Bool())
		}
		if fmt.Sprint(verdicts) != fmt.Sprint(w.verdicts) {
			t.Errorf("%s: verdicts %v, want %v", w.name, verdicts, w.verdicts)
		}
		if got := get("rag.contextual_precision.k").Int(); got != int64(len(w.verdicts)) {
			t.Errorf("%s: k %d", w.name, got)
		}
		if got := get("rag.contextual_precision.reference_source").Str(); got != w.refSource {
			t.Errorf("%s: reference_source %q, want %q", w.name, got, w.refSource)
		}
		if got := get("rag.contextual_precision.judge").Str(); got != "openai:e2e-judge" {
			t.Errorf("%s: judge %q", w.name, got)
		}
		if got := get("rag.contextual_precision.sample_rate").Double(); got != 1 {
			t.Errorf("%s: sample_rate %v", w.name, got)
		}
		if services[w.name] != w.service {
			t.Errorf("%s: resource service.name %q", w.name, services[w.name])
		}
		var event ptrace.SpanEvent
		found := false
		for _, e := range s.Events().All() {
			if e.Name() == "gen_ai.evaluation.result" {
				event, found = e, true
			}
		}
		if !found {
			t.Errorf("%s: no gen_ai.evaluation.result event", w.name)
			continue
		}
		ea := event.Attributes()
		label := "fail"
		if w.passed {
			label = "pass"
		}
		name, _ := ea.Get("gen_ai.evaluation.name")
		value, _ := ea.Get("gen_ai.evaluation.score.value")
		lbl, _ := ea.Get("gen_ai.evaluation.score.label")
		expl, _ := ea.Get("gen_ai.evaluation.explanation")
		if name.Str() != "contextual_precision" || math.Abs(value.Double()-w.cp) > 1e-9 || lbl.Str() != label || expl.Str() == "" {
			t.Errorf("%s: event %v", w.name, ea.AsRaw())
		}
	}
}

// checkJudgeRequests checks what reached the judge: the key from the
// environment, temperature 0, one request per distinct chunk judgement.
func checkJudgeRequests(t *testing.T, judge *chattest.Server) {
	t.Helper()
	reqs := judge.Requests()
	// 3 + 3 chunks over gRPC ("Paris is the capital of France." twice, with
	// the same question and reference: the cache answers the second), then
	// 2 + 1 over HTTP.
	if len(reqs) != 8 {
		t.Errorf("%d judge requests, want 8", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-e2e-secret" {
			t.Errorf("Authorization %q", got)
		}
		if r.Temperature == nil || *r.Temperature != 0 || r.Model != "e2e-judge" {
			t.Errorf("model %q temperature %v", r.Model, r.Temperature)
		}
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// counter sums a counter family over the series whose labels match.
func counter(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
	var total float64
outer:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			if label(m, k) != v {
				continue outer
			}
		}
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total, true
}

// checkMetrics scrapes the collector's own telemetry once the first three
// retrievals are scored.
func checkMetrics(t *testing.T, url string, scored []sent) {
	t.Helper()
	var families map[string]*dto.MetricFamily
	deadline := time.Now().Add(15 * time.Second)
	for {
		families = scrape(t, url)
		if n, _ := counter(families, "otelcol_processor_ragprecision_scored_spans_total", nil); n >= float64(len(scored)) {
			break
		}
		if time.Now().After(deadline) {
			names := make([]string, 0, len(families))
			for n := range families {
				names = append(names, n)
			}
			t.Fatalf("scored_spans never reached %d; families: %v", len(scored), names)
		}
		time.Sleep(200 * time.Millisecond)
	}

	hist, ok := families["rag_contextual_precision"]
	if !ok || hist.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("rag_contextual_precision missing or not a histogram: %v", hist)
	}
	type key struct{ service, source, ref string }
	wantCount := map[key]uint64{}
	wantSum := map[key]float64{}
	for _, s := range scored {
		k := key{s.service, s.name, s.refSource}
		wantCount[k]++
		wantSum[k] += s.cp
	}
	for _, m := range hist.GetMetric() {
		k := key{label(m, "service_name"), label(m, "data_source"), label(m, "reference_source")}
		if k.source == "slow-judgement" {
			continue // still in flight, or just done: its count is not fixed yet
		}
		if label(m, "judge_model") != "openai:e2e-judge" {
			t.Errorf("judge_model %q", label(m, "judge_model"))
		}
		h := m.GetHistogram()
		if h.GetSampleCount() != wantCount[k] || math.Abs(h.GetSampleSum()-wantSum[k]) > 1e-9 {
			t.Errorf("series %+v: count %d sum %v, want %d %v", k, h.GetSampleCount(), h.GetSampleSum(), wantCount[k], wantSum[k])
		}
		var bounds []float64
		for _, b := range h.GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if fmt.Sprint(bounds) != "[0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1 +Inf]" && fmt.Sprint(bounds) != "[0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1]" {
			t.Errorf("buckets %v", bounds)
		}
		delete(wantCount, k)
	}
	if len(wantCount) != 0 {
		t.Errorf("series missing: %v", wantCount)
	}

	// All four retrievals have arrived (the slow one is held); seven chunk
	// judgements are done and the eighth is in flight. The second "Paris is
	// the capital of France." of the gRPC traces cost no request: it came
	// from the cache, or from the first one's request still in flight.
	for name, want := range map[string]float64{
		"otelcol_processor_ragprecision_candidate_spans_total":      4,
		"otelcol_processor_ragprecision_selected_spans_total":       4,
		"otelcol_processor_ragprecision_verdict_cache_hits_total":   1,
		"otelcol_processor_ragprecision_verdict_cache_misses_total": 8,
	} {
		if got, ok := counter(families, name, nil); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got, _ := counter(families, "otelcol_processor_ragprecision_judge_requests_total", map[string]string{"outcome": "ok"}); got < 7 {
		t.Errorf("judge_requests{outcome=ok} = %v, want at least 7", got)
	}
	if got, _ := counter(families, "otelcol_processor_ragprecision_judge_tokens_total", map[string]string{"type": "prompt"}); got < 700 {
		t.Errorf("prompt tokens %v", got)
	}
	if _, ok := families["otelcol_processor_ragprecision_judge_latency_seconds"]; !ok {
		t.Error("judge latency histogram missing")
	}
	if _, ok := families["otelcol_processor_ragprecision_held_spans"]; !ok {
		t.Error("held spans missing")
	}
}

// TestExampleConfigsValidate checks that every configuration under
// examples/ is accepted by the distribution, so the docs cannot rot.
func TestExampleConfigsValidate(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs: %v", err)
	}
	root := repoRoot(t)
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		// From the repository's root, as the README runs them: the demo's
		// canary file is named from there.
		cmd := exec.Command(bin, "validate", "--config", abs)
		if example, err := os.ReadFile(abs); err == nil && strings.Contains(string(example), healthGate) {
			// The command in the file's header turns on the gate it needs.
			cmd.Args = append(cmd.Args, healthGate)
		}
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-example", "OTLP_BACKEND=localhost:4317")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
	// And a broken one is refused with the key named.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	cfg := strings.Replace(render(t, configTemplate, map[string]string{"GRPC": "4317", "HTTP": "4318", "JUDGE": "http://localhost:1/v1",
		"SINK": "localhost:4319", "HEALTH": "13133", "METRICS": "8888"}), "threshold: 0.7", "threshold: 7", 1)
	if err := os.WriteFile(bad, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", bad)
	cmd.Env = append(os.Environ(), "E2E_JUDGE_API_KEY=k")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "threshold: must be within [0, 1], got 7") {
		t.Errorf("invalid threshold accepted or badly reported: %v\n%s", err, out)
	}
}
