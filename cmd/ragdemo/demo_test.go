package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemo runs the whole demo against a built collector, on free ports so
// that it can run next to a demo on the default ones. It runs when
// RAGPRECISION_COLLECTOR names the binary (absolute, or relative to the
// module root), e.g.
//
//	RAGPRECISION_COLLECTOR=bin/otelcol-ragprecision go test -run TestDemo -v ./cmd/ragdemo/
func TestDemo(t *testing.T) {
	bin := os.Getenv("RAGPRECISION_COLLECTOR")
	if bin == "" {
		t.Skip("set RAGPRECISION_COLLECTOR to the otelcol-ragprecision binary to run the demo")
	}
	const moduleRoot = "../.." // tests run in the package directory
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(moduleRoot, bin)
	}

	ports := freePorts(t, 6)
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	// The demo passes the addresses it uses to the collector; the ones it
	// does not use are moved off their defaults through the environment,
	// which the collector inherits.
	t.Setenv("RAGDEMO_OTLP_HTTP", addr(4))
	t.Setenv("RAGDEMO_ZPAGES", addr(5))
	t.Setenv("TMPDIR", t.TempDir()) // the collector's log goes there, and away afterwards
	o := options{
		collector:    bin,
		config:       filepath.Join(moduleRoot, "examples", "demo.yaml"),
		otlp:         addr(0),
		sink:         addr(1),
		health:       addr(2),
		metrics:      addr(3),
		startTimeout: 30 * time.Second,
		spanTimeout:  30 * time.Second,
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, o, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}

	report := out.String()
	for _, want := range []string{
		"Mean CP, good rankings: ",
		"Plain (non-RAG) spans: 2 came back untouched.",
		`rag_contextual_precision_count{data_source="handbook",judge_model="builtin:lexical",reference_source="reference",service_name="ragdemo"}`,
		`reference_source="answer"`,
		`otelcol_processor_ragprecision_scored_spans_total{data_source="handbook",service_name="ragdemo"} ` + strconv.Itoa(2*len(questions)),
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(report, "note:") {
		t.Error("every retrieval should be scored, good rankings above bad ones")
	}

	// run stopped the collector: its ports are free again.
	for i, p := range ports[:4] {
		l, err := net.Listen("tcp", addr(i))
		if err != nil {
			t.Errorf("port %d still in use after the demo: %v", p, err)
			continue
		}
		l.Close()
	}
}

// freePorts returns n distinct TCP ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l) // held until all are picked, so none repeats
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
