package ragprecisionprocessor

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// scrapeOpenMetrics fetches an endpoint's metrics as Prometheus with
// exemplar storage asks for them.
func scrapeOpenMetrics(t *testing.T, addr string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("content type %q, not OpenMetrics", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// bucketExemplar matches a bucket with an exemplar, whose labels come in
// any order.
var (
	bucketExemplar = regexp.MustCompile(`(?m)^rag_contextual_precision_bucket\{[^}]*\} \S+ # \{([^}]*)\} \S+`)
	exemplarTrace  = regexp.MustCompile(`trace_id="([0-9a-f]{32})"`)
	exemplarSpan   = regexp.MustCompile(`span_id="([0-9a-f]{16})"`)
)

// With product_metrics.endpoint set, the product metrics leave the
// collector's own telemetry for the processor's endpoint, in OpenMetrics
// with the scored spans' IDs as exemplars, under unchanged names.
func TestProductMetricsEndpointServesExemplars(t *testing.T) {
	addr := freeAddr(t)
	h := newHarness(t, func(c *config.Config) { c.ProductMetrics.ServerConfig.NetAddr.Endpoint = addr })
	b := newBatch("rag-api")
	good := b.project("good", "What is the capital of France?", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)

	body := scrapeOpenMetrics(t, addr)
	m := bucketExemplar.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no exemplar on rag_contextual_precision_bucket:\n%s", body)
	}
	trace, span := exemplarTrace.FindStringSubmatch(m[1]), exemplarSpan.FindStringSubmatch(m[1])
	if trace == nil || span == nil || trace[1] != good.TraceID().String() || span[1] != good.SpanID().String() {
		t.Errorf("exemplar {%s}, scored span's trace %s span %s", m[1], good.TraceID(), good.SpanID())
	}
	version := h.p.cfg.Judge.Version()
	for _, want := range []string{
		`rag_contextual_precision_count{data_source="good",judge_model="builtin:lexical",judge_version="` + version + `",reference_source="reference",service_name="rag-api"} 1`,
		`rag_contextual_precision_squares_total{data_source="good",judge_model="builtin:lexical",judge_version="` + version + `",reference_source="reference",service_name="rag-api"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the endpoint lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "otelcol_") || strings.Contains(body, "otel_scope") || strings.Contains(body, "target_info") {
		t.Errorf("the product endpoint serves more than the product metrics:\n%s", body)
	}
	if _, err := h.tel.GetMetric(metricPrecision); err == nil {
		t.Error("rag_contextual_precision is also on the collector's own telemetry: Prometheus scraping both would count it twice")
	}
	if got := counterValue(t, h.tel, metricScored, nil); got != 1 {
		t.Errorf("scored_spans_total on the collector's telemetry = %d, want 1", got)
	}
	h.shutdown(context.Background())
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still listens after Shutdown", addr)
	}
}

// Every processor configured with one endpoint (one per pipeline) shares
// it; it stops with the last of them.
func TestProductMetricsEndpointIsShared(t *testing.T) {
	addr := freeAddr(t)
	set := func(c *config.Config) { c.ProductMetrics.ServerConfig.NetAddr.Endpoint = addr }
	a, b := newHarness(t, set), newHarness(t, set)
	for _, h := range []*harness{a, b} {
		batch := newBatch("rag-api")
		batch.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
		h.consume(batch.td)
		h.waitSpans(1)
	}
	version := a.p.cfg.Judge.Version()
	series := func(name, extra string) string {
		return name + `{data_source="retrieve",judge_model="builtin:lexical",judge_version="` + version + `",` + extra +
			`reference_source="reference",service_name="rag-api"}`
	}
	body := scrapeOpenMetrics(t, addr)
	for _, want := range []string{
		series("rag_contextual_precision_count", "") + " 2\n",
		// The diagnostics' counters, kept per endpoint, add up too.
		series("rag_retrieval_outcome_total", `outcome="ideal",`) + " 2.0\n",
		series("rag_retrieval_outcome_total", `outcome="misranked",`) + " 0.0\n",
		`rag_retrieval_chunks_judged_total{data_source="retrieve",judge_model="builtin:lexical",judge_version="` + version + `",rank="1",reference_source="reference",service_name="rag-api"} 2.0` + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the two processors' scores do not add up on their shared endpoint: no %s in\n%s", want, body)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	a.shutdown(context.Background())
	if body := scrapeOpenMetrics(t, addr); !strings.Contains(body, "rag_contextual_precision_count") {
		t.Fatalf("the endpoint stopped with the first of its processors:\n%s", body)
	}
	b.shutdown(context.Background())
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still listens after the last Shutdown", addr)
	}
}

// A taken port fails Start with the key and the address.
func TestProductMetricsEndpointInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := config.Default()
	cfg.ProductMetrics.ServerConfig.NetAddr.Endpoint = l.Addr().String()
	p, err := newProcessor(processortest.NewNopSettings(metadata.Type).TelemetrySettings, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "product_metrics.endpoint "+l.Addr().String()) {
		t.Fatalf("Start: %v", err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
