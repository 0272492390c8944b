package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/internal/promcheck"
	"github.com/ragprecision/ragprecision/scoring"
)

const (
	rulesFile     = "../../deploy/prometheus/ragprecision.rules.yml"
	dashboardFile = "../../deploy/grafana/ragprecision.json"

	// liveScale runs the production rules 120 times faster: their hour is
	// 30s, their week 84m (longer than the test: all of it), for: 15m is
	// 7.5s. It is the one parameter of the time scale (docs/OPERATING.md).
	liveScale = "1/120"
	// liveRate is the retrievals a second the tests send, shared by their
	// two variants: 300 in the rules' (scaled) hour, 150 a variant, well
	// above the 30-score guards.
	liveRate = 10
	// goodPhase is how long good traffic runs before the drop: the scaled
	// hour, plus time for a baseline of 30 scores, plus for:, with room.
	goodPhase = 75 * time.Second
)

// The live tests' collector: an LLM judge (the local keyword judge) with
// pricing, so that requests, tokens, latency, cache and cost all have data;
// its drift canary, and a second model of the same judge as shadow on half
// the traffic, so that the canary's and the shadow's rules have data too.
// Its product metrics are on product_metrics.endpoint, the operational ones
// on its own telemetry: the rules and the dashboard read both. The variant
// label comes from trafficVariantAttribute. Adaptive sampling is on, held
// at 100% (min_percentage) so that the alerts' timing is a fixed rate's,
// and its percentage gauge and weights have data.
const liveCollectorConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
processors:
  ragprecision:
    sampling_percentage: 100
    threshold: 0.7
    max_wait: 10s
    # The rerank spans carry a query and no reference (the keyword judge
    # reads neither).
    reference_sources: [reference, answer, query]
    judge:
      model: openai:live-judge
      base_url: {{JUDGE}}
      api_key: sk-live
      max_requests_per_second: 0
      max_retries: 1
      timeout: 4s
      pricing:
        input_per_million: 0.15
        output_per_million: 0.6
        currency: USD
      canary:
        file: {{CANARY}}
        interval: 10s
        max_retrievals: 10
    shadow_judge:
      percentage: 50
      model: openai:live-shadow
      base_url: {{JUDGE}}
      api_key: sk-live
      max_requests_per_second: 0
      max_retries: 1
      timeout: 4s
    product_metrics:
      endpoint: 127.0.0.1:{{PRODUCT}}
    attributes:
      variant: retriever.version
    adaptive_sampling:
      enabled: true
      judge_requests_per_second: 1000
      min_percentage: 100
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
      level: warn
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
      processors: [ragprecision, batch]
      exporters: [otlp_grpc]
`

// liveExpr is a PromQL expression of the rules or the dashboard.
type liveExpr struct {
	source string // "rule NAME" or "panel TITLE"
	expr   string
	// recorded: a recording rule or a panel query, which must return data
	// once traffic flows; alert expressions are empty while all is well.
	mustReturnData bool
}

// dashboardVariables stand for what Grafana substitutes: the test's
// service, every data source and judge, and a $__rate_interval of four
// scrape intervals.
var dashboardVariables = strings.NewReplacer(
	"$__rate_interval", "4s",
	"$service_name", trafficService,
	"$data_source", ".*",
	"$judge_model", ".*",
)

func liveExpressions(t *testing.T, rules *promcheck.RuleFile) []liveExpr {
	t.Helper()
	var out []liveExpr
	for _, r := range rules.Rules() {
		out = append(out, liveExpr{source: "rule " + r.Name(), expr: r.Expr, mustReturnData: r.Record != ""})
	}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := promcheck.DashboardQueries(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		expr := q.Expr
		if q.Variable {
			sel, label, err := promcheck.ParseLabelValues(q.Expr)
			if err != nil {
				t.Fatal(err)
			}
			expr = "count by (" + label + ") (" + sel + ")"
		}
		out = append(out, liveExpr{source: "panel " + q.Panel, expr: dashboardVariables.Replace(expr), mustReturnData: true})
	}
	return out
}

// liveStack is the collector of liveCollectorConfig, with the local keyword
// judge and a sink for its spans, scraped by a Prometheus of its own that
// runs the rules scaled by liveScale. Everything listens on ports of its own
// and writes under the test's temporary directories, so that live tests can
// run side by side.
type liveStack struct {
	collector              *collector
	prom                   *promServer
	rules                  *promcheck.RuleFile
	factor                 float64
	grpc                   string // the collector's OTLP/gRPC receiver
	metricsURL, productURL string
}

func startLiveStack(t *testing.T) *liveStack {
	t.Helper()
	bin := collectorBinary(t)
	promBin := prometheusBinary(t)

	judge := chattest.NewServer(chattest.KeywordJudge(trafficKeyword))
	t.Cleanup(judge.Close)
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Stop() })
	ports := map[string]string{"GRPC": freePort(t), "METRICS": freePort(t), "PRODUCT": freePort(t), "HEALTH": freePort(t), "JUDGE": judge.URL, "SINK": sink.Addr(), "CANARY": keywordCanary(t, 10)}
	st := &liveStack{
		collector:  launchCollector(t, bin, render(t, liveCollectorConfig, ports), ports["HEALTH"]),
		grpc:       "127.0.0.1:" + ports["GRPC"],
		metricsURL: "http://127.0.0.1:" + ports["METRICS"] + "/metrics",
		productURL: "http://127.0.0.1:" + ports["PRODUCT"] + "/metrics",
	}

	rulesData, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.factor, err = promcheck.ParseFactor(liveScale); err != nil {
		t.Fatal(err)
	}
	scaled, err := promcheck.ScaleRules(rulesData, st.factor)
	if err != nil {
		t.Fatal(err)
	}
	if st.rules, err = promcheck.ParseRules(scaled); err != nil {
		t.Fatal(err)
	}
	st.prom = startPrometheus(t, promBin, scrapeConfig([]string{"127.0.0.1:" + ports["METRICS"], "127.0.0.1:" + ports["PRODUCT"]}, "ragprecision.rules.yml"),
		map[string][]byte{"ragprecision.rules.yml": scaled})
	st.prom.waitTargetsUp(t)
	return st
}

// TestPrometheusRulesAndDashboardLive runs the rules (scaled by liveScale)
// and the dashboard's queries in a real Prometheus that scrapes the real
// collector: good traffic from two variants that rank alike fires nothing,
// then rankings turn bad and the precision-drop alert goes pending, then
// firing.
func TestPrometheusRulesAndDashboardLive(t *testing.T) {
	t.Parallel()
	st := startLiveStack(t)
	prom, factor := st.prom, st.factor
	exprs := liveExpressions(t, st.rules)

	// Every expression parses in Prometheus.
	for _, e := range exprs {
		if _, err := prom.query(e.expr); err != nil {
			t.Errorf("%s does not evaluate: %v", e.source, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Steady good traffic: no alert may even go pending.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Two variants with the same rankings, so that every variant rule has
	// data and RAGVariantRegressed must stay silent.
	gen := newTrafficGen(ctx, t, st.grpc, "v1", "v2")
	defer gen.shutdown(t)
	go gen.run(ctx, liveRate)
	// Reranks with both rankings, for the reranker's lift.
	go gen.runReranks(ctx, 2)
	start := time.Now()
	fired := map[string]bool{}
	for time.Since(start) < goodPhase {
		alerts, err := prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			name := a.Labels["alertname"]
			if !fired[name] {
				fired[name] = true
				t.Errorf("%s went %s on steady good traffic (value %s, labels %v)", name, a.State, a.Value, a.Labels)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}

	// Everything the rules and the dashboard name exists, and every
	// recording rule and panel returns data, but for the canary's baseline
	// week (it begins before this test does; TestPrometheusJudgeDriftLive
	// checks it) and the cascade's savings (this judge is no cascade; the
	// rules' promtool tests check them).
	checkLiveData(t, prom, withoutExprs(exprs, notLiveHere))
	checkRuleHealth(t, prom)
	reportTuning(t, prom, gen.retrievals(), start)
	// Three reranks in four gain 5/12, the fourth loses 5/12: a mean of
	// 5/24 over the window (give or take a rerank at its edges).
	lift := prom.value(t, fmt.Sprintf(`service_data_source:rag_rerank_lift:mean1h{service_name=%q, data_source=%q}`, trafficService, trafficRerankSource))
	if math.Abs(lift-5.0/24) > 0.05 {
		t.Errorf("mean rerank lift %.4f, want 5/24 = %.4f", lift, 5.0/24)
	}

	// The rankings turn bad.
	gen.setPhase(badRankings)
	drop := time.Now()
	var pendingAfter, firingAfter time.Duration
	deadline := drop.Add(90 * time.Second)
	for firingAfter == 0 && time.Now().Before(deadline) {
		alerts, err := prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.Labels["alertname"] != "RAGContextualPrecisionDropped" {
				continue
			}
			if a.Labels["data_source"] != trafficDataSource || a.Labels["service_name"] != trafficService {
				t.Errorf("alert on an unexpected series: %v", a.Labels)
			}
			switch {
			case a.State == "pending" && pendingAfter == 0:
				pendingAfter = time.Since(drop)
			case a.State == "firing":
				firingAfter = time.Since(drop)
				t.Logf("RAGContextualPrecisionDropped fired: %q", a.Annotations["summary"])
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	forScaled, _ := promcheck.ScaleDuration("15m", factor)
	switch {
	case firingAfter == 0:
		t.Fatalf("RAGContextualPrecisionDropped did not fire within 90s of the drop (pending after %v)", pendingAfter)
	case pendingAfter == 0:
		t.Errorf("RAGContextualPrecisionDropped fired after %v without being seen pending first", firingAfter)
	default:
		t.Logf("scale %s (the rules' hour is 30s, for: 15m is %s): RAGContextualPrecisionDropped pending %.1fs and firing %.1fs after the rankings turned bad, at %d retrievals/s",
			liveScale, forScaled, pendingAfter.Seconds(), firingAfter.Seconds(), liveRate)
	}
	// With every retrieval of the window bad, the failing share is far above
	// a half: that alert fires too, and the drop's expression has data.
	for _, e := range exprs {
		if e.source == "rule RAGContextualPrecisionDropped" {
			if s, err := prom.query(e.expr); err != nil || len(s) == 0 {
				t.Errorf("%s returns no data after the drop: %v", e.source, err)
			}
		}
	}

	cancel()
	// Flush the traffic while the collector still listens: the SDK's last
	// export fails once it has stopped.
	gen.shutdown(t)
	checkCatalogAgainstScrape(t, []string{st.metricsURL, st.productURL}, nil)
	for name := range scrape(t, st.metricsURL) {
		if strings.HasPrefix(name, "rag_") {
			t.Errorf("%s is on the collector's own endpoint as well as on product_metrics.endpoint: scraped twice, it would count twice", name)
		}
	}
	st.collector.stop(t)
}

// TestPrometheusVariantsLive feeds two variants from one traffic generator:
// v2 ranks well, v1 ranks every other retrieval badly. RAGVariantRegressed
// goes pending, then firing, for v1 alone, naming v2 as the better variant;
// it never goes active for v2.
func TestPrometheusVariantsLive(t *testing.T) {
	t.Parallel()
	st := startLiveStack(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gen := newTrafficGen(ctx, t, st.grpc, "v1", "v2")
	defer gen.shutdown(t)
	gen.setVariantPhase("v1", regressedRankings)
	go gen.run(ctx, liveRate)
	start := time.Now()

	var pendingAfter, firingAfter time.Duration
	var firing activeAlert
	others := map[string]bool{}
	deadline := start.Add(2 * time.Minute)
	// After the firing, watch a little longer: v2 must stay silent too.
	for time.Now().Before(deadline) && (firingAfter == 0 || time.Since(start) < firingAfter+5*time.Second) {
		alerts, err := st.prom.alerts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			name := a.Labels["alertname"]
			if name != "RAGVariantRegressed" {
				if !others[name] {
					others[name] = true
					t.Logf("%s went %s after %.1fs (labels %v)", name, a.State, time.Since(start).Seconds(), a.Labels)
				}
				continue
			}
			if a.Labels["variant"] != "v1" || a.Labels["data_source"] != trafficDataSource || a.Labels["service_name"] != trafficService {
				t.Fatalf("RAGVariantRegressed went %s for %v; only v1 of %s ranks worse", a.State, a.Labels, trafficDataSource)
			}
			switch {
			case a.State == "pending" && pendingAfter == 0:
				pendingAfter = time.Since(start)
			case a.State == "firing" && firingAfter == 0:
				firingAfter, firing = time.Since(start), a
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	forScaled, _ := promcheck.ScaleDuration("1h", st.factor)
	switch {
	case firingAfter == 0:
		t.Fatalf("RAGVariantRegressed did not fire for v1 within %v of the traffic's start (pending after %v)", deadline.Sub(start), pendingAfter)
	case pendingAfter == 0:
		t.Errorf("RAGVariantRegressed fired after %v without being seen pending first", firingAfter)
	}
	t.Logf("RAGVariantRegressed fired: %q", firing.Annotations["summary"])
	for _, want := range []string{"Variant v1 ", " than v2 by "} {
		if !strings.Contains(firing.Annotations["summary"], want) {
			t.Errorf("the summary does not name both variants (%q): %q", want, firing.Annotations["summary"])
		}
	}
	if d := firing.Annotations["description"]; !strings.Contains(d, "of variant v2") || !strings.Contains(d, "variant v1 of") {
		t.Errorf("the description does not name both variants: %q", d)
	}
	checkVariantMeans(t, st.prom, gen.retrievals())
	gap, _ := strconv.ParseFloat(firing.Value, 64)
	t.Logf("scale %s (the rules' hour and RAGVariantRegressed's for: 1h are %s), %d retrievals/s over two variants: RAGVariantRegressed for v1 pending %.1fs and firing %.1fs after the traffic started (v1 below v2 by %.3f)",
		liveScale, forScaled, liveRate, pendingAfter.Seconds(), firingAfter.Seconds(), gap)

	cancel()
	gen.shutdown(t)
	st.collector.stop(t)
}

// checkVariantMeans checks the recorded mean of each variant over the
// rules' hour against the scores the test sent in it, and that the best
// variant is v2.
func checkVariantMeans(t *testing.T, prom *promServer, sent []sentRetrieval) {
	t.Helper()
	window := map[string]*scoring.Stats{"v1": {}, "v2": {}}
	end := time.Now()
	for _, s := range sent {
		if w := window[s.variant]; w != nil && s.at.After(end.Add(-30*time.Second)) {
			w.Add(s.cp)
		}
	}
	for _, v := range []string{"v1", "v2"} {
		sel := fmt.Sprintf(`{service_name=%q, data_source=%q, variant=%q}`, trafficService, trafficDataSource, v)
		mean := prom.value(t, "service_data_source_variant:rag_contextual_precision:mean1h"+sel)
		hw := prom.value(t, "service_data_source_variant:rag_contextual_precision:ci95_halfwidth1h"+sel)
		t.Logf("variant %s: recorded mean %.4f ± %.4f over the rules' hour; scoring.Stats of the %d scores sent in it %.4f ± %.4f",
			v, mean, hw, window[v].Count(), window[v].Mean(), window[v].CI95())
		if math.Abs(mean-window[v].Mean()) > 0.03 {
			t.Errorf("variant %s: recorded mean %.4f, sent %.4f", v, mean, window[v].Mean())
		}
	}
	best, err := prom.query(fmt.Sprintf(`service_data_source:rag_contextual_precision:best_variant_mean1h{service_name=%q, data_source=%q}`, trafficService, trafficDataSource))
	if err != nil || len(best) != 1 || best[0].Metric["variant"] != "v2" {
		t.Errorf("best variant: %v (%v), want v2", best, err)
	}
}

// notLiveHere matches the expressions that TestPrometheusRulesAndDashboardLive
// cannot give data: the drift canary's week before its last 6 hours, and
// the cascade's.
var notLiveHere = regexp.MustCompile(`canary\S*1w|cascade`)

// withoutExprs returns the expressions whose source and text do not match re.
func withoutExprs(exprs []liveExpr, re *regexp.Regexp) []liveExpr {
	var out []liveExpr
	for _, e := range exprs {
		if !re.MatchString(e.source + " " + e.expr) {
			out = append(out, e)
		}
	}
	return out
}

// onlyExprs returns the expressions whose source or text match re.
func onlyExprs(exprs []liveExpr, re *regexp.Regexp) []liveExpr {
	var out []liveExpr
	for _, e := range exprs {
		if re.MatchString(e.source + " " + e.expr) {
			out = append(out, e)
		}
	}
	return out
}

// checkLiveData checks that every selector of every expression names series
// that exist in Prometheus, and that recording rules and panels return data.
func checkLiveData(t *testing.T, prom *promServer, exprs []liveExpr) {
	t.Helper()
	checked := map[string]bool{}
	for _, e := range exprs {
		a, err := promcheck.Analyze(e.expr)
		if err != nil {
			t.Errorf("%s: %v", e.source, err)
			continue
		}
		for _, s := range a.Selectors {
			sel := s.String()
			if checked[sel] {
				continue
			}
			checked[sel] = true
			got, err := prom.query("count(" + sel + ")")
			if err != nil || len(got) == 0 {
				t.Errorf("%s: %s names no series (%v)", e.source, sel, err)
			}
		}
		if e.mustReturnData {
			got, err := prom.query(e.expr)
			if err != nil || len(got) == 0 {
				t.Errorf("%s returns no data: %s (%v)", e.source, e.expr, err)
			}
		}
	}
	t.Logf("%d expressions evaluated, %d distinct selectors found in Prometheus", len(exprs), len(checked))
}

func checkRuleHealth(t *testing.T, prom *promServer) {
	t.Helper()
	rules, err := prom.rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("Prometheus loaded no rules")
	}
	for _, r := range rules {
		if r.Health != "ok" {
			t.Errorf("rule %s: health %q %s", r.Name, r.Health, r.LastError)
		}
	}
}

// reportTuning prints what the recording rules say about sampling, next to
// the same statistics computed with scoring.Stats from the scores the test
// sent, and checks that they agree.
func reportTuning(t *testing.T, prom *promServer, sent []sentRetrieval, start time.Time) {
	t.Helper()
	sel := fmt.Sprintf(`{service_name=%q, data_source=%q}`, trafficService, trafficDataSource)
	get := func(name string) float64 { return prom.value(t, name+sel) }
	var all, lastWindow scoring.Stats
	end := time.Now()
	for _, s := range sent {
		all.Add(s.cp)
		if s.at.After(end.Add(-30 * time.Second)) {
			lastWindow.Add(s.cp)
		}
	}
	mean := get("service_data_source:rag_contextual_precision:mean1h")
	n := get("service_data_source:rag_contextual_precision_count:increase1h")
	hw := get("service_data_source:rag_contextual_precision:ci95_halfwidth1h")
	sd := get("service_data_source:rag_contextual_precision:stddev1w")
	needed := get("service_data_source:ragprecision_samples_needed:1h")
	current := get("service_data_source:ragprecision_sampling_percentage:current1h")
	recommended := get("service_data_source:ragprecision_sampling_percentage:recommended1h")
	candidates := get("service_data_source:otelcol_processor_ragprecision_candidate_spans:increase1h")
	perHour := get("service_data_source:ragprecision_judged_spans:per_hour")
	cost := prom.value(t, `sum(judge_model_currency:ragprecision_judge_cost:per_judged_span1h)`)
	t.Logf("recording rules, %s after the traffic started (window 30s = the rules' hour at scale %s):", time.Since(start).Round(time.Second), liveScale)
	t.Logf("  scores in the window %.0f, mean %.4f, 95%% half-width %.4f; baseline sd %.4f", n, mean, hw, sd)
	t.Logf("  candidates in the window %.0f, judged spans per hour %.0f, sampling now %.1f%%", candidates, perHour, current)
	t.Logf("  scores needed for a half-width of 0.05: %.0f, recommended sampling_percentage %.1f%%; judge cost per judged span %.6f USD", needed, recommended, cost)
	t.Logf("scoring.Stats over the %d scores sent: mean %.4f, sd %.4f, SamplesFor(0.05) = %d; over the last 30s: n %d, CI95 %.4f",
		all.Count(), all.Mean(), all.StdDev(), all.SamplesFor(0.05), lastWindow.Count(), lastWindow.CI95())

	// The rules' maths from counters agrees with Welford's on the scores.
	if math.Abs(sd-all.StdDev()) > 0.01 {
		t.Errorf("baseline sd %.4f, scoring.Stats %.4f", sd, all.StdDev())
	}
	if want := float64(all.SamplesFor(0.05)); math.Abs(needed-want) > 0.1*want+1 {
		t.Errorf("scores needed %.0f, scoring.Stats.SamplesFor %.0f", needed, want)
	}
	if math.Abs(mean-lastWindow.Mean()) > 0.02 {
		t.Errorf("mean of the window %.4f, of the scores sent in it %.4f", mean, lastWindow.Mean())
	}
	if math.Abs(hw-lastWindow.CI95()) > 0.25*lastWindow.CI95() {
		t.Errorf("half-width %.4f, scoring.Stats.CI95 %.4f", hw, lastWindow.CI95())
	}
	if math.Abs(current-100) > 1 {
		t.Errorf("current sampling percentage %.2f, configured 100", current)
	}
	if want := 100 * needed / candidates; math.Abs(recommended-want) > 0.05*want {
		t.Errorf("recommended %.2f%%, 100·needed/candidates = %.2f%%", recommended, want)
	}
}

// checkCatalogAgainstScrape holds promcheck's catalog against a live
// scrape of one collector's endpoints: every processor family scraped is in
// the catalog with only its labels (beyond extra, labels an exporter adds)
// and closed-set values, and the families and values that exist from the
// start are all there.
func checkCatalogAgainstScrape(t *testing.T, urls []string, extra []string) {
	t.Helper()
	families := map[string]*dto.MetricFamily{}
	for _, url := range urls {
		for name, f := range scrape(t, url) {
			if _, dup := families[name]; dup && strings.HasPrefix(name, "rag_") {
				t.Errorf("%s is served by more than one of %v", name, urls)
			}
			families[name] = f
		}
	}
	catalog := map[string]promcheck.Family{}
	for _, f := range promcheck.Catalog() {
		catalog[f.Name] = f
	}
	for name, fam := range families {
		if !strings.HasPrefix(name, "otelcol_processor_ragprecision_") && !strings.HasPrefix(name, "rag_contextual_precision") &&
			!strings.HasPrefix(name, "rag_retrieval_") && !strings.HasPrefix(name, "rag_rerank_") {
			continue
		}
		f, ok := catalog[name]
		if !ok {
			t.Errorf("the collector exports %s, which promcheck.Catalog does not list", name)
			continue
		}
		if f.Histogram != (fam.GetType() == dto.MetricType_HISTOGRAM) {
			t.Errorf("%s: type %v, catalog says histogram=%v", name, fam.GetType(), f.Histogram)
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(f.Labels, l.GetName()) && !slices.Contains(extra, l.GetName()) {
					t.Errorf("%s has label %s, which the catalog does not list", name, l.GetName())
				}
				if values, closed := f.Values[l.GetName()]; closed && !slices.Contains(values, l.GetValue()) {
					t.Errorf("%s{%s=%q}: a value the catalog does not list", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, name := range []string{"rag_contextual_precision", "rag_contextual_precision_squares_total",
		"otelcol_processor_ragprecision_candidate_spans_total", "otelcol_processor_ragprecision_selected_spans_total",
		"otelcol_processor_ragprecision_scored_spans_total", "otelcol_processor_ragprecision_unscored_spans_total",
		"otelcol_processor_ragprecision_judge_requests_total", "otelcol_processor_ragprecision_judge_up",
		"otelcol_processor_ragprecision_held_spans", "otelcol_processor_ragprecision_dropped_spans_total",
		"otelcol_processor_ragprecision_series_folded_total"} {
		if _, ok := families[name]; !ok {
			t.Errorf("%s is not exported", name)
		}
	}
	// Statuses, outcomes and drop reasons exist from the start: all of them.
	for name, key := range map[string]string{
		"otelcol_processor_ragprecision_unscored_spans_total": "status",
		"otelcol_processor_ragprecision_judge_requests_total": "outcome",
		"otelcol_processor_ragprecision_dropped_spans_total":  "reason",
	} {
		var seen []string
		for _, m := range families[name].GetMetric() {
			if v := label(m, key); v != "" && !slices.Contains(seen, v) {
				seen = append(seen, v)
			}
		}
		want := slices.Clone(catalog[name].Values[key])
		sort.Strings(seen)
		sort.Strings(want)
		if !slices.Equal(seen, want) {
			t.Errorf("%s: %s values %v, catalog %v", name, key, seen, want)
		}
	}
}

// The exemplar tests run the example files themselves.
const (
	exemplarsExample = "../../examples/exemplars.yaml"
	pushExample      = "../../examples/exemplars-push.yaml"
	gatewayExample   = "../../examples/exemplars-gateway.yaml"
)

// openMetricsExemplar matches a bucket sample with an exemplar in the
// OpenMetrics text format.
var openMetricsExemplar = regexp.MustCompile(`^rag_contextual_precision_bucket\{[^}]*\} \S+ # \{([^}]*)\} (\S+)`)

// TestPrometheusExemplars runs examples/exemplars.yaml: one collector,
// scraped by a plain Prometheus with exemplar storage on, shows the
// histogram's exemplars, naming trace and span IDs of retrieval spans the
// test sent, and the collector's two endpoints carry the catalog's families.
func TestPrometheusExemplars(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	promBin := prometheusBinary(t)
	example, err := os.ReadFile(exemplarsExample)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	grpc, health, product, metrics := freePort(t), freePort(t), freePort(t), freePort(t)
	c := launchCollector(t, bin, string(example), health,
		"RAGPRECISION_HEALTH=127.0.0.1:"+health,
		"RAGPRECISION_OTLP_GRPC=127.0.0.1:"+grpc,
		"RAGPRECISION_OTLP_HTTP=127.0.0.1:"+freePort(t),
		"RAGPRECISION_PRODUCT_METRICS=127.0.0.1:"+product,
		"RAGPRECISION_METRICS_HOST=127.0.0.1",
		"RAGPRECISION_METRICS_PORT="+metrics,
		"OTLP_BACKEND="+sink.Addr(),
		"OTLP_BACKEND_INSECURE=true")
	prom := startPrometheus(t, promBin, scrapeConfig([]string{"127.0.0.1:" + product, "127.0.0.1:" + metrics}), nil, "--enable-feature=exemplar-storage")
	start := time.Now()
	sent := sendForExemplars(t, "127.0.0.1:"+grpc)
	productURL := "http://127.0.0.1:" + product + "/metrics"
	checkExemplars(t, prom, productURL, sent, start)
	checkCatalogAgainstScrape(t, []string{productURL, "http://127.0.0.1:" + metrics + "/metrics"}, nil)
	c.stop(t)
}

// TestPrometheusExemplarsGateway runs examples/exemplars-push.yaml and its
// gateway, examples/exemplars-gateway.yaml: the collector pushes its
// metrics over OTLP, the gateway serves them with exemplars under the names
// of the pull endpoint, and both collectors stop cleanly.
func TestPrometheusExemplarsGateway(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	promBin := prometheusBinary(t)
	example, err := os.ReadFile(pushExample)
	if err != nil {
		t.Fatal(err)
	}
	gatewayConfig, err := os.ReadFile(gatewayExample)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	gatewayOTLP, promPort, gatewayHealth := freePort(t), freePort(t), freePort(t)
	gateway := launchCollector(t, bin, string(gatewayConfig), gatewayHealth,
		"GATEWAY_HEALTH=127.0.0.1:"+gatewayHealth,
		"GATEWAY_OTLP_GRPC=127.0.0.1:"+gatewayOTLP,
		"GATEWAY_PROMETHEUS=127.0.0.1:"+promPort,
		"GATEWAY_TELEMETRY_HOST=127.0.0.1",
		"GATEWAY_TELEMETRY_PORT="+freePort(t))
	grpc, health := freePort(t), freePort(t)
	c := launchCollector(t, bin, string(example), health,
		"RAGPRECISION_HEALTH=127.0.0.1:"+health,
		"RAGPRECISION_OTLP_GRPC=127.0.0.1:"+grpc,
		"RAGPRECISION_OTLP_HTTP=127.0.0.1:"+freePort(t),
		"RAGPRECISION_TELEMETRY_INTERVAL=1000",
		"TELEMETRY_GATEWAY=127.0.0.1:"+gatewayOTLP,
		"OTLP_BACKEND="+sink.Addr(),
		"OTLP_BACKEND_INSECURE=true")
	prom := startPrometheus(t, promBin, scrapeConfig([]string{"127.0.0.1:" + promPort}), nil, "--enable-feature=exemplar-storage")
	start := time.Now()
	sent := sendForExemplars(t, "127.0.0.1:"+grpc)
	exporter := "http://127.0.0.1:" + promPort + "/metrics"
	checkExemplars(t, prom, exporter, sent, start)
	// Same names and labels as the pull endpoint, plus the exporter's job
	// and instance (from the collector's resource).
	checkCatalogAgainstScrape(t, []string{exporter}, []string{"job", "instance"})
	c.stop(t)
	gateway.stop(t)
}

// sendForExemplars sends 400 retrievals (the examples sample 10% of
// traces) and returns the span ID of each trace's retrieval span.
func sendForExemplars(t *testing.T, grpc string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gen := newTrafficGen(ctx, t, grpc)
	for range 400 {
		gen.send(ctx)
	}
	gen.shutdown(t)
	sent := map[string]string{}
	for _, s := range gen.retrievals() {
		sent[s.traceID] = s.spanID
	}
	return sent
}

// checkExemplars checks that the OpenMetrics scrape of url carries
// exemplars on the histogram's buckets, that Prometheus stores them, and
// that each names a retrieval span of sent.
func checkExemplars(t *testing.T, prom *promServer, url string, sent map[string]string, start time.Time) {
	t.Helper()
	var found []string
	deadline := time.Now().Add(30 * time.Second)
	for len(found) == 0 && time.Now().Before(deadline) {
		found = openMetricsExemplars(t, url)
		time.Sleep(500 * time.Millisecond)
	}
	if len(found) == 0 {
		t.Fatalf("no exemplar on rag_contextual_precision_bucket at %s", url)
	}
	for _, e := range found {
		traceID, spanID := exemplarIDs(e)
		if want, ok := sent[traceID]; !ok || want != spanID {
			t.Errorf("exemplar %s names no retrieval span the test sent", e)
		}
	}
	t.Logf("OpenMetrics scrape: %d buckets carry an exemplar, e.g. %s", len(found), found[0])

	var stored []exemplar
	var err error
	deadline = time.Now().Add(30 * time.Second)
	for len(stored) == 0 && time.Now().Before(deadline) {
		stored, err = prom.exemplars("rag_contextual_precision_bucket", start, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(stored) == 0 {
		t.Fatal("Prometheus stored no exemplar of rag_contextual_precision_bucket")
	}
	for _, e := range stored {
		if want, ok := sent[e.Labels["trace_id"]]; !ok || want != e.Labels["span_id"] {
			t.Errorf("stored exemplar %v names no retrieval span the test sent", e.Labels)
		}
		if e.Value < 0 || e.Value > 1 {
			t.Errorf("exemplar value %v is not a Contextual Precision", e.Value)
		}
	}
	t.Logf("Prometheus /api/v1/query_exemplars: %d exemplars, e.g. trace_id=%s span_id=%s value %v (series le=%s)",
		len(stored), stored[0].Labels["trace_id"], stored[0].Labels["span_id"], stored[0].Value, stored[0].SeriesLabels["le"])
}

// openMetricsExemplars returns the exemplar label sets on the histogram's
// buckets of an OpenMetrics scrape.
func openMetricsExemplars(t *testing.T, url string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("%s answered %q, not OpenMetrics", url, ct)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := openMetricsExemplar.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var exemplarLabel = regexp.MustCompile(`(trace_id|span_id)="([0-9a-f]+)"`)

func exemplarIDs(labels string) (traceID, spanID string) {
	for _, m := range exemplarLabel.FindAllStringSubmatch(labels, -1) {
		if m[1] == "trace_id" {
			traceID = m[2]
		} else {
			spanID = m[2]
		}
	}
	return traceID, spanID
}
