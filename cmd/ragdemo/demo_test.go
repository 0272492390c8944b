package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/testports"
)

const moduleRoot = "../.." // tests run in the package directory

// collectorBinary returns the otelcol-ragprecision binary that
// RAGPRECISION_COLLECTOR names (absolute, or relative to the module root),
// e.g.
//
//	RAGPRECISION_COLLECTOR=bin/otelcol-ragprecision go test -run TestDemo -v ./cmd/ragdemo/
//
// Without it the test is skipped, except in CI (CI set, as CI services and
// .ci/run set it), where it fails: a skipped end-to-end test would pass a
// build whose distribution was never run.
func collectorBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("RAGPRECISION_COLLECTOR")
	if bin == "" {
		msg := "RAGPRECISION_COLLECTOR is not set; `make e2e` builds the distribution and sets it"
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatal(msg + " (CI is set, so the demo test must run)")
		}
		t.Skip(msg)
	}
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(moduleRoot, bin)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("RAGPRECISION_COLLECTOR: %v", err)
	}
	return bin
}

var demoConfig = filepath.Join(moduleRoot, "examples", "demo.yaml")

// TestDemo runs the demo as `make demo` does, while another process — say a
// collector the user started by hand — holds examples/demo.yaml's default
// ports and answers on them: the demo's collector must get ports of its
// own, and the demo must talk to it alone.
func TestDemo(t *testing.T) {
	bin := collectorBinary(t)
	t.Setenv("TMPDIR", t.TempDir()) // the collector's log goes there, and away afterwards
	for _, k := range []string{"RAGDEMO_OTLP_GRPC", "RAGDEMO_OTLP_HTTP", "RAGDEMO_SINK", "RAGDEMO_HEALTH", "RAGDEMO_METRICS_HOST", "RAGDEMO_METRICS_PORT", "RAGDEMO_ZPAGES"} {
		t.Setenv(k, "")
	}
	for _, addr := range []string{defaultOTLP, defaultHealth, defaultMetrics} {
		impostor(t, addr) // a port already taken by something else is as good
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, options{collector: bin, config: demoConfig, startTimeout: 30 * time.Second, spanTimeout: 30 * time.Second}, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out.String())

	m := regexp.MustCompile(`OTLP/gRPC on (\S+), health on (\S+), metrics on (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatal("the report does not say where the collector listens")
	}
	for _, addr := range m[1:] {
		for _, def := range []string{defaultOTLP, defaultHealth, defaultMetrics} {
			if _, p, _ := net.SplitHostPort(def); strings.HasSuffix(addr, ":"+p) {
				t.Errorf("the demo's collector used %s, a default port", addr)
			}
		}
		// run stopped the collector: its ports are free again.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s still in use after the demo: %v", addr, err)
			continue
		}
		l.Close()
	}
}

// checkReport checks what every successful demo prints: every retrieval
// scored with its outcome and nDCG, v2 found the better retriever with an
// interval, each variant's mean and outcome counts, and the metrics with
// their variant label.
func checkReport(t *testing.T, report string) {
	t.Helper()
	for _, want := range []string{
		"v2 ranks better than v1: mean CP ",
		"Plain (non-RAG) spans: 2 came back untouched.",
		`rag_contextual_precision_count{data_source="handbook",judge_model="builtin:lexical",judge_version="`,
		`reference_source="reference",service_name="ragdemo",variant="v1"}`,
		`reference_source="answer",service_name="ragdemo",variant="v2"}`,
		`rag_retrieval_outcome_total{data_source="handbook",`,
		`otelcol_processor_ragprecision_scored_spans_total{data_source="handbook",service_name="ragdemo"} ` + strconv.Itoa(2*len(questions)),
		// builtin:lexical makes no requests: the report says why the counter
		// is 0, or, where a batch outran the inline budget, what it counts.
		`otelcol_processor_ragprecision_judge_requests_total{judge_model="builtin:lexical",outcome="ok",purpose="traffic"} `,
		"scored_spans_total counts " + strconv.Itoa(2*len(questions)),
		"The judge agreed with the author's relevance labels on ",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	ok := regexp.MustCompile(`judge_requests_total\{judge_model="builtin:lexical",outcome="ok",purpose="traffic"\} (\d+)`).FindStringSubmatch(report)
	if ok != nil && ok[1] == "0" && !strings.Contains(report, "builtin:lexical judges inside the collector, without requests: judge_requests_total stays at 0") {
		t.Error("no judge requests, and the report does not say why")
	}
	if ok != nil && ok[1] != "0" && !strings.Contains(report, "the judge's workers took the rest: judge_requests_total counts their "+ok[1]) {
		t.Errorf("%s judge requests, and the report does not say why", ok[1])
	}
	row := regexp.MustCompile(`(?m)^\d+ .* (v1 \(bad\)|v2 \(good\)) .* scored +\d\.\d{3} +(PASS|fail) +(ideal|misranked|miss) +\d\.\d{3} +[✓✗]+ `)
	if n := len(row.FindAllString(report, -1)); n != 2*len(questions) {
		t.Errorf("%d rows show a retriever, CP, outcome and nDCG; want %d", n, 2*len(questions))
	}
	for _, v := range []string{variantNew, variantOld} {
		line := regexp.MustCompile(`(?m)^ +` + v + ` +` + strconv.Itoa(len(questions)) + ` +\d\.\d{3} ± \d\.\d{3} +\d\.\d{3} +(\d+) +(\d+) +(\d+)$`)
		m := line.FindStringSubmatch(report)
		if m == nil {
			t.Errorf("no summary line for %s with its mean, interval and outcome counts", v)
			continue
		}
		sum := 0
		for _, c := range m[1:] {
			n, _ := strconv.Atoi(c)
			sum += n
		}
		if sum != len(questions) {
			t.Errorf("%s: outcome counts %v add up to %d, want %d", v, m[1:], sum, len(questions))
		}
	}
	if !regexp.MustCompile(`mean CP \d\.\d{3} ± \d\.\d{3} higher, 95% CI \+\d\.\d{3} to \+\d\.\d{3} \(Welch's t, [\d.]+ df\)`).MatchString(report) {
		t.Error("the comparison does not give the difference with its interval")
	}
	if !regexp.MustCompile(`v1 (finds the relevant chunks but ranks them lower|misses more)`).MatchString(report) {
		t.Error("the comparison does not say what v1 gets wrong")
	}
	// Every good ranking that is not ideal is explained, rank by rank.
	goodMisranked := regexp.MustCompile(`(?m)^(\d+) .* v2 \(good\) .* (misranked|miss) `).FindAllStringSubmatch(report, -1)
	for _, m := range goodMisranked {
		if !regexp.MustCompile(`(?m)^ +row ` + m[1] + ` \(v2\): rank \d is `).MatchString(report) {
			t.Errorf("row %s, a good ranking, is %s without a word why", m[1], m[2])
		}
	}
	if strings.Contains(report, "note:") {
		t.Error("every retrieval should be scored, v2's good rankings above v1's bad ones")
	}
}

// impostor answers 200 to every HTTP request on addr, as another
// collector's health_check would, and returns the address it listens on;
// "" when addr is taken already.
func impostor(t *testing.T, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return ""
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "someone else") })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// TestDemoWithRunningCollector is the newcomer who starts the collector by
// hand and then runs `go run ./cmd/ragdemo` to send it traffic: the demo
// starts nothing, and listens where examples/demo.yaml exports.
func TestDemoWithRunningCollector(t *testing.T) {
	bin := collectorBinary(t)
	t.Setenv("TMPDIR", t.TempDir())
	ports := freePorts(t, 6)
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	// The RAGDEMO_* variables stand for the config's default addresses,
	// which the test cannot count on being free; the demo reads the same
	// variables, as it would read nothing and use the defaults.
	for k, v := range map[string]string{
		"RAGDEMO_OTLP_GRPC": addr(0), "RAGDEMO_SINK": addr(1), "RAGDEMO_HEALTH": addr(2),
		"RAGDEMO_METRICS_HOST": "127.0.0.1", "RAGDEMO_METRICS_PORT": strconv.Itoa(ports[3]),
		"RAGDEMO_OTLP_HTTP": addr(4), "RAGDEMO_ZPAGES": addr(5),
	} {
		t.Setenv(k, v)
	}
	c, err := startCollector(bin, demoConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.stop(15 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.waitHealthy(ctx, addr(2), 30*time.Second); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	err = run(ctx, options{startTimeout: 5 * time.Second, spanTimeout: 30 * time.Second}, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out.String())
	if !strings.Contains(out.String(), "using the collector already running at "+addr(0)) {
		t.Error("the report does not say which collector it used")
	}
	select {
	case <-c.exited:
		t.Error("the demo stopped a collector it did not start")
	default:
	}

	// -metrics also takes the endpoint's URL, as the collector's docs print it.
	if got, err := metricsAddr("http://" + addr(3) + "/metrics"); err != nil || got != addr(3) {
		t.Errorf("metricsAddr(URL) = %q, %v", got, err)
	}
}

// freePorts returns n ports given to no other test (internal/testports).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		p, err := testports.Pick()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	return ports
}
