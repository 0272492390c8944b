package e2e

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// The scale-out tests run the two-tier topology of docs/DEPLOYING.md on loopback:
// bin/otelcol-router with deploy/router's configuration (the loadbalancing
// exporter, routing_key: traceID) in front of otelcol-ragprecision
// replicas, each exporting to a sink of its own, so that the tests know
// which replica forwarded each span.

// scoringConfig is a scoring replica: builtin:lexical (deterministic, so
// that a tier and a single collector must agree span for span), trace_join
// on, every trace selected.
const scoringConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: {{HOST}}:{{GRPC}}
processors:
  ragprecision:
    sampling_percentage: 100
    max_wait: 10s
    trace_join:
      enabled: true
      wait: {{JOIN_WAIT}}
    judge:
      model: builtin:lexical
  batch:
    timeout: 100ms
exporters:
  otlp_grpc:
    endpoint: {{SINK}}
    tls:
      insecure: true
extensions:
  health_check:
    endpoint: {{HOST}}:{{HEALTH}}
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
                host: {{HOST}}
                port: {{METRICS}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision, batch]
      exporters: [otlp_grpc]
`

// replica is one scoring collector and the sink it exports to.
type replica struct {
	proc      *process
	sink      *otlpsink.Sink
	host      string
	grpc      string
	metrics   string
	config    string
	healthURL string
}

func (r *replica) endpoint() string { return r.host + ":" + r.grpc }

func (r *replica) metricsURL() string { return "http://" + r.host + ":" + r.metrics + "/metrics" }

// newReplica prepares a replica on host:port (port "" for any free one)
// with a sink of its own; start runs it.
func newReplica(t *testing.T, name, host, port, joinWait string) *replica {
	t.Helper()
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Stop)
	if port == "" {
		port = freePortOn(t, host)
	}
	r := &replica{sink: sink, host: host, grpc: port, metrics: freePortOn(t, host)}
	health := freePortOn(t, host)
	cfg := render(t, scoringConfig, map[string]string{"HOST": host, "GRPC": port, "HEALTH": health,
		"METRICS": r.metrics, "SINK": sink.Addr(), "JOIN_WAIT": joinWait})
	r.config = writeFile(t, t.TempDir(), name+".yaml", cfg)
	r.healthURL = "http://" + host + ":" + health + "/"
	r.start(t, name, r.healthURL)
	return r
}

func (r *replica) start(t *testing.T, name, healthURL string) {
	t.Helper()
	r.proc = startProcess(t, name, []string{collectorBinary(t), "--config", r.config}, nil, healthURL)
}

// routerRun says how to start the router: a configuration and the
// environment that names its replicas.
type routerRun struct {
	configs []string // --config arguments, in order
	env     []string
	// hosts, when set, is a file bind-mounted over /etc/hosts in a mount
	// namespace of the router's own (unshare), so that a test can change
	// what the DNS resolver finds.
	hosts string
}

// staticRouter is deploy/router/static.yaml with the replicas as its
// static backends.
func staticRouter(t *testing.T, replicas []*replica) routerRun {
	t.Helper()
	var backends []string
	for _, r := range replicas {
		backends = append(backends, r.endpoint())
	}
	return routerRun{
		configs: []string{filepath.Join(repoRoot(t), "deploy", "router", "static.yaml")},
		env:     []string{"SCORING_REPLICAS=[" + strings.Join(backends, ", ") + "]"},
	}
}

// startRouter runs bin/otelcol-router on free loopback ports.
func startRouter(t *testing.T, run routerRun) (*process, string, string) {
	t.Helper()
	bin := routerBinary(t)
	grpc, health, metrics := freePortOn(t, "127.0.0.1"), freePortOn(t, "127.0.0.1"), freePortOn(t, "127.0.0.1")
	argv := []string{bin}
	for _, c := range run.configs {
		argv = append(argv, "--config", c)
	}
	if run.hosts != "" {
		// unshare -m: /etc/hosts is replaced for the router alone.
		argv = append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount --bind "$0" /etc/hosts && exec "$@"`, run.hosts}, argv...)
	}
	env := append([]string{
		"ROUTER_OTLP_GRPC_ENDPOINT=127.0.0.1:" + grpc,
		"ROUTER_OTLP_HTTP_ENDPOINT=127.0.0.1:" + freePortOn(t, "127.0.0.1"),
		"ROUTER_HEALTH_ENDPOINT=127.0.0.1:" + health,
		"ROUTER_METRICS_HOST=127.0.0.1",
		"ROUTER_METRICS_PORT=" + metrics,
	}, run.env...)
	p := startProcess(t, "router", argv, env, "http://127.0.0.1:"+health+"/")
	return p, "127.0.0.1:" + grpc, "http://127.0.0.1:" + metrics + "/metrics"
}

// histogramSeries is one series of rag_contextual_precision.
type histogramSeries struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64 // cumulative count by upper bound
}

// scrapeHistogram reads rag_contextual_precision from each URL and adds the
// series up, by their labels.
func scrapeHistogram(t *testing.T, urls ...string) map[string]*histogramSeries {
	t.Helper()
	out := map[string]*histogramSeries{}
	for _, url := range urls {
		f, ok := scrape(t, url)["rag_contextual_precision"]
		if !ok {
			continue // a replica that scored nothing has no series
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := strings.Join(labels, ",")
			s := out[key]
			if s == nil {
				s = &histogramSeries{buckets: map[float64]uint64{}}
				out[key] = s
			}
			h := m.GetHistogram()
			s.count += h.GetSampleCount()
			s.sum += h.GetSampleSum()
			for _, b := range h.GetBucket() {
				s.buckets[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	return out
}

// counterValue sums a counter over its series, whether the endpoint names it
// with the _total suffix or without.
func counterValue(t *testing.T, url, name string) float64 {
	t.Helper()
	families := scrape(t, url)
	if v, ok := counter(families, name+"_total", nil); ok {
		return v
	}
	v, _ := counter(families, name, nil)
	return v
}

// sendAll sends every request in order and fails the test on one the
// collector still refuses after the sender's retries.
func sendAll(ctx context.Context, t *testing.T, s *otlpSender, traces []ragTrace, perRequest int) {
	t.Helper()
	for i, td := range ragRequests(traces, perRequest) {
		if err := s.send(ctx, td); err != nil {
			t.Fatalf("request %d refused: %v", i, err)
		}
	}
}

// TestScaleOut: one router, two scoring replicas. Every retrieval span is
// scored exactly once, with the answer of its trace's root span although
// the two travel in different requests (and reach the router in either
// order), and the histograms of the two replicas add up to what one
// collector alone makes of the same traffic.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	collectorBinary(t)
	routerBinary(t)
	traffic := ragTraffic(200, 42)
	want := spanCount(traffic)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The tier.
	a := newReplica(t, "scoring-a", "127.0.0.1", "", "5s")
	b := newReplica(t, "scoring-b", "127.0.0.1", "", "5s")
	router, routerAddr, routerMetrics := startRouter(t, staticRouter(t, []*replica{a, b}))
	sendAll(ctx, t, newOTLPSender(t, routerAddr), traffic, 8)
	if n := waitSettled(traffic, 20*time.Second, time.Minute, a.sink, b.sink); n != want {
		t.Fatalf("%d of %d spans arrived through the tier", n, want)
	}
	tier := arrivals(a.sink, b.sink)
	tierHist := scrapeHistogram(t, a.metricsURL(), b.metricsURL())
	routed := counterValue(t, routerMetrics, "otelcol_exporter_sent_spans")
	router.stop(t)
	a.proc.stop(t)
	b.proc.stop(t)

	// One collector alone, on the same traffic.
	single := newReplica(t, "scoring-single", "127.0.0.1", "", "5s")
	sendAll(ctx, t, newOTLPSender(t, single.endpoint()), traffic, 8)
	if n := waitSettled(traffic, 20*time.Second, time.Minute, single.sink); n != want {
		t.Fatalf("%d of %d spans arrived through the single collector", n, want)
	}
	alone := arrivals(single.sink)
	aloneHist := scrapeHistogram(t, single.metricsURL())
	single.proc.stop(t)

	// Exactly once, scored, with the trace's answer; each replica took a share.
	perSink := [2]int{}
	for _, tr := range traffic {
		for _, id := range []pcommon.SpanID{tr.root, tr.retrieval, tr.plain} {
			got := tier[id]
			if got == nil || got.count != 1 {
				t.Fatalf("span %v of trace %v arrived %v times, want once", id, tr.id, got)
			}
		}
		r := tier[tr.retrieval]
		if r.status != "scored" || r.refSrc != "answer" {
			t.Errorf("trace %v: retrieval status %q, reference %q; want scored against the trace's answer", tr.id, r.status, r.refSrc)
		}
		if tier[tr.root].sink != r.sink || tier[tr.plain].sink != r.sink {
			t.Errorf("trace %v was split across replicas", tr.id)
		}
		if s := alone[tr.retrieval]; s == nil || s.status != r.status || s.cp != r.cp {
			t.Errorf("trace %v: tier %+v, single collector %+v", tr.id, r, s)
		}
		perSink[r.sink]++
	}
	if len(tier) != want {
		t.Errorf("%d distinct spans arrived, %d sent", len(tier), want)
	}
	if perSink[0] == 0 || perSink[1] == 0 {
		t.Errorf("traces per replica %v: the router did not spread them", perSink)
	}
	if routed != float64(want) {
		t.Errorf("router sent %v spans, want %d", routed, want)
	}

	// The histograms of the tier add up to the single collector's.
	if len(aloneHist) == 0 {
		t.Fatal("the single collector recorded no rag_contextual_precision series")
	}
	var scored uint64
	for key, s := range aloneHist {
		got := tierHist[key]
		if got == nil || got.count != s.count || math.Abs(got.sum-s.sum) > 1e-9 || fmt.Sprint(got.buckets) != fmt.Sprint(s.buckets) {
			t.Errorf("series %s: tier %+v, single %+v", key, got, s)
		}
		scored += s.count
	}
	if len(tierHist) != len(aloneHist) {
		t.Errorf("tier has %d series, single collector %d", len(tierHist), len(aloneHist))
	}
	if scored != uint64(len(traffic)) {
		t.Errorf("histogram counts %d scores, want %d", scored, len(traffic))
	}
	t.Logf("%d traces (%d spans) through 1 router and 2 replicas: %d and %d traces per replica; every span once, every retrieval scored against its trace's answer; %d histogram series summed over the replicas equal the single collector's (%d scores)",
		len(traffic), want, perSink[0], perSink[1], len(aloneHist), scored)
}
