// Command ragdemo shows the ragprecision processor at work in one command:
//
//	go run ./cmd/ragdemo -collector bin/otelcol-ragprecision -config examples/demo.yaml
//
// It starts the collector on free ports, sends it traces of a small RAG
// application written in three span dialects — each question answered once
// by retriever v1, which ranks the distractors on top, and once by v2, which
// ranks the same chunks well — receives the annotated spans back over OTLP,
// and prints the Contextual Precision, outcome and nDCG of every retrieval,
// which retriever ranks better and by how much, and the histogram the
// collector exposes to Prometheus.
//
// Without -collector it sends the same traffic to a collector that is
// already running with examples/demo.yaml, on that config's addresses
// (localhost:4317 and so on, or the RAGDEMO_* variables it was started
// with), and listens where that config exports:
//
//	bin/otelcol-ragprecision --config examples/demo.yaml   # in one terminal
//	go run ./cmd/ragdemo                                   # in another
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// options are the command-line flags. An empty address means the default:
// see resolveAddrs.
type options struct {
	collector string // binary to start; "" when one is already running
	config    string
	keep      bool

	otlp    string // the collector's OTLP/gRPC receiver
	sink    string // where the collector's exporter sends spans
	health  string // the health_check extension
	metrics string // the collector's Prometheus endpoint, host:port

	startTimeout time.Duration // for the collector to become healthy
	spanTimeout  time.Duration // for every span to come back
}

func main() {
	var o options
	const dflt = "default: with -collector a free port, else $%s or %s"
	flag.StringVar(&o.collector, "collector", "", "collector binary to start (e.g. bin/otelcol-ragprecision); empty: send to a collector already running with examples/demo.yaml")
	flag.StringVar(&o.config, "config", "examples/demo.yaml", "collector config for -collector")
	flag.BoolVar(&o.keep, "keep", false, "leave the started collector running after the report, until Ctrl-C")
	flag.StringVar(&o.otlp, "otlp", "", "the collector's OTLP/gRPC receiver, host:port ("+fmt.Sprintf(dflt, "RAGDEMO_OTLP_GRPC", defaultOTLP)+")")
	flag.StringVar(&o.sink, "sink", "", "address the demo receives the collector's output on ("+fmt.Sprintf(dflt, "RAGDEMO_SINK", defaultSink)+")")
	flag.StringVar(&o.health, "health", "", "the collector's health_check endpoint ("+fmt.Sprintf(dflt, "RAGDEMO_HEALTH", defaultHealth)+")")
	flag.StringVar(&o.metrics, "metrics", "", "the collector's Prometheus endpoint, host:port or http://host:port/metrics ("+
		fmt.Sprintf(dflt, "RAGDEMO_METRICS_HOST:$RAGDEMO_METRICS_PORT", defaultMetrics)+")")
	flag.DurationVar(&o.startTimeout, "start-timeout", 30*time.Second, "how long to wait for the collector to become healthy")
	flag.DurationVar(&o.spanTimeout, "span-timeout", 30*time.Second, "how long to wait for the annotated spans to come back")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragdemo: "+err.Error())
		os.Exit(1)
	}
}

// run is the whole demo; errors are what the newcomer needs to read.
func run(ctx context.Context, o options, out io.Writer) (err error) {
	a, err := resolveAddrs(o, os.Getenv)
	if err != nil {
		return err
	}
	start := o.collector != ""
	if start {
		// Before anything listens: a taken port is a clear error here,
		// rather than a collector that exits while the demo talks to
		// whatever else answers on that port.
		if err := checkCollector(o.collector, o.config); err != nil {
			return err
		}
		if err := checkFree(a.listeners()); err != nil {
			return err
		}
	}

	// The sink listens before the collector starts, so that its exporter
	// delivers at once.
	sink, err := otlpsink.StartHTTP(a.sink)
	if err != nil {
		return fmt.Errorf("listening for the collector's output on %s: %w (is another demo running? pick another address with -sink)", a.sink, err)
	}
	defer sink.Stop()
	a.sink = sink.Addr()
	fmt.Fprintf(out, "==> receiving the collector's output on %s\n", a.sink)
	metricsURL := "http://" + a.metrics + "/metrics"

	if start {
		env, err := a.collectorEnv()
		if err != nil {
			return err
		}
		c, err := startCollector(o.collector, o.config, env)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "==> started %s --config %s (pid %d)\n    OTLP/gRPC on %s, health on %s, metrics on %s\n    collector log: %s\n",
			o.collector, o.config, c.pid(), a.otlp, a.health, a.metrics, c.logPath)
		defer func() {
			if stopErr := c.stop(15 * time.Second); stopErr != nil && err == nil {
				err = stopErr
			}
		}()
		if err := c.waitHealthy(ctx, a.health, o.startTimeout); err != nil {
			return err
		}
		defer func() {
			if err == nil && o.keep {
				fmt.Fprintf(out, "\n==> -keep: the collector (pid %d) keeps running. Send it OTLP on %s (gRPC) or %s (HTTP);\n"+
					"    scrape %s; browse http://%s/debug/pipelinez. Its output comes back to this demo. Ctrl-C stops it.\n",
					c.pid(), a.otlp, a.otlpHTTP, metricsURL, a.zpages)
				select {
				case <-ctx.Done():
				case <-c.exited:
					err = fmt.Errorf("the collector exited; see its log: %s", c.logPath)
				}
			}
		}()
	} else {
		if err := waitHealthy(ctx, a.health, o.startTimeout, nil); err != nil {
			return fmt.Errorf("no collector answers at %s: %w.\nStart one in another terminal (make build && bin/otelcol-ragprecision --config examples/demo.yaml), or let the demo start its own: go run ./cmd/ragdemo -collector bin/otelcol-ragprecision",
				a.health, err)
		}
		fmt.Fprintf(out, "==> using the collector already running at %s; it must export to %s, as examples/demo.yaml does\n", a.otlp, a.sink)
	}
	fmt.Fprintf(out, "==> the collector is healthy (http://%s/)\n", a.health)

	sentAt := time.Now()
	s, err := sendTraffic(ctx, a.otlp)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "==> sent %d traces (%d questions × retrievers %s and %s, in %d dialects) and 1 plain trace: %d spans to %s\n",
		len(s.cases), len(questions), variantOld, variantNew, countDialects(), s.spans, a.otlp)

	// Retrieval spans come back once judged; the ones that need their
	// trace's answer from an LLM span wait trace_join.wait first.
	waitCtx, cancel := context.WithTimeout(ctx, o.spanTimeout)
	got, waitErr := waitForSpans(waitCtx, sink, s)
	cancel()
	res := collectResults(s, sink.Traces())
	if waitErr != nil {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			return ctx.Err()
		}
		// Show what did arrive before failing: it says which dialect is stuck.
		_ = printTable(out, res.results)
		if !start && got == 0 {
			return fmt.Errorf("none of the %d spans came back within %s: the running collector must export over OTLP/HTTP to %s, as the otlp_http exporter of examples/demo.yaml does (set RAGDEMO_SINK when starting it, or -sink here, to move it)",
				s.spans, o.spanTimeout, a.sink)
		}
		return fmt.Errorf("only %d of %d spans came back within %s; see the collector's log", got, s.spans, o.spanTimeout)
	}
	fmt.Fprintf(out, "==> all %d spans came back after %s\n\n", got, time.Since(sentAt).Round(time.Millisecond))

	if err := printTable(out, res.results); err != nil {
		return err
	}
	sum := summarize(res.results)
	fmt.Fprintf(out, "\nVerdicts are in rank order (✓ relevant, ✗ not); CP = Σ P@k·v_k / Σ v_k, pass at >= 0.7.\n"+
		"OUTCOME: ideal (relevant chunks on top), misranked (relevant chunks below others), miss (none relevant).\n"+
		"CP, OUTCOME and NDCG are what the collector wrote on each span.\n\n")
	if lines := explainRankings(res.results); len(lines) > 0 {
		fmt.Fprintf(out, "Why not every %s (good) ranking is ideal: the demo's good rankings let a near-miss in, as real\n"+
			"retrievers do (cmd/ragdemo/corpus.go), and the judge is not the author:\n", variantNew)
		for _, l := range lines {
			fmt.Fprintln(out, "    "+l)
		}
	}
	if agree, judged := labelAgreement(res.results); judged > 0 {
		fmt.Fprintf(out, "The judge agreed with the author's relevance labels on %d of %d chunks.\n\n", agree, judged)
	}
	if err := printComparison(out, sum); err != nil {
		return err
	}
	if len(res.plainChanged) == 0 {
		fmt.Fprintf(out, "Plain (non-RAG) spans: %d came back untouched.\n", len(s.plain))
	}
	if i, r, ok := firstFailure(res.results); ok {
		fmt.Fprintf(out, "Why row %d failed, from its %s span event:\n    %s\n", i+1, ragattr.EvaluationEvent, r.explanation)
	}

	fmt.Fprintf(out, "\n==> metrics: %s (what Prometheus scrapes and Grafana alerts on)\n", metricsURL)
	lines, scrapeErr := scrapeMetrics(ctx, metricsURL)
	for _, l := range lines {
		fmt.Fprintln(out, "    "+l)
	}
	if len(lines) > 0 {
		// Buckets are cumulative, so le="0.7" over the count is the share of
		// retrievals at or below the threshold: a natural alert expression.
		fmt.Fprintf(out, "\nShare of retrievals scoring at most 0.7 over 10 minutes, per data source (an alert expression):\n"+
			"    sum by (data_source) (rate(rag_contextual_precision_bucket{le=\"0.7\"}[10m]))\n"+
			"      / sum by (data_source) (rate(rag_contextual_precision_count[10m]))\n"+
			"Per variant, the hour's mean CP that RAGVariantRegressed compares (deploy/prometheus/ragprecision.rules.yml):\n"+
			"    service_data_source_variant:rag_contextual_precision:mean1h\n")
	}
	if len(lines) > 0 {
		fmt.Fprintln(out, "\n"+samplingSummary(lines))
	}
	if note := inProcessJudgeNote(res.results, lines); note != "" {
		fmt.Fprintln(out, "\n"+note)
	}

	// The checks come last, so that a failing demo still shows what it saw.
	switch {
	case len(res.plainChanged) > 0:
		return fmt.Errorf("non-RAG spans must pass untouched, but: %v", res.plainChanged)
	case sum.scored == 0:
		return fmt.Errorf("no retrieval span was scored; the statuses above say why, the collector's log may say more")
	case scrapeErr != nil:
		return scrapeErr
	case !hasHistogram(lines):
		return fmt.Errorf("%s has no rag_contextual_precision histogram", metricsURL)
	}
	if sum.scored < len(res.results) {
		fmt.Fprintf(out, "\nnote: %d of %d retrieval spans were not scored (see STATUS).\n", len(res.results)-sum.scored, len(res.results))
	}
	if !ranksBetter(sum, variantNew, variantOld) {
		fmt.Fprintf(out, "\nnote: the judge did not score %s's good rankings above %s's bad ones.\n", variantNew, variantOld)
	}
	return nil
}

// hasHistogram reports whether the scraped lines hold the histogram's count.
func hasHistogram(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "rag_contextual_precision_count") {
			return true
		}
	}
	return false
}

// firstFailure returns the first scored result that failed, whose
// explanation makes a good example.
func firstFailure(results []result) (int, result, bool) {
	for i, r := range results {
		if r.scored && !r.passed && r.explanation != "" {
			return i, r, true
		}
	}
	return 0, result{}, false
}

// countDialects is the number of distinct dialects the questions use.
func countDialects() int {
	seen := map[dialect]bool{}
	for _, q := range questions {
		seen[q.dialect] = true
	}
	return len(seen)
}
