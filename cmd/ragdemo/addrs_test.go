package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveAddrsStart(t *testing.T) {
	a, err := resolveAddrs(options{collector: "bin/otelcol-ragprecision"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range a.listeners() {
		host, port, err := net.SplitHostPort(l.addr)
		if err != nil || host != "127.0.0.1" {
			t.Errorf("%s: %q", l.what, l.addr)
		}
		for _, def := range []string{defaultOTLP, defaultOTLPHTTP, defaultHealth, defaultMetrics, defaultZPages} {
			if strings.HasSuffix(def, ":"+port) {
				t.Errorf("%s on a default port: %s", l.what, l.addr)
			}
		}
		if seen[l.addr] {
			t.Errorf("%s given twice", l.addr)
		}
		seen[l.addr] = true
	}
	if err := checkFree(a.listeners()); err != nil {
		t.Errorf("chosen ports not free: %v", err)
	}
	if a.sink != "127.0.0.1:0" {
		t.Errorf("sink %q, want any free port", a.sink)
	}

	// Flags first, then the variables examples/demo.yaml reads.
	a, err = resolveAddrs(options{collector: "c", otlp: "localhost:1", metrics: "http://localhost:2/metrics", sink: "localhost:3"},
		env(map[string]string{"RAGDEMO_OTLP_GRPC": "ignored:9", "RAGDEMO_HEALTH": "localhost:4", "RAGDEMO_ZPAGES": "localhost:5"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.otlp != "localhost:1" || a.metrics != "localhost:2" || a.sink != "localhost:3" || a.health != "localhost:4" || a.zpages != "localhost:5" {
		t.Errorf("addresses %+v", a)
	}
	envs, err := a.collectorEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RAGDEMO_OTLP_GRPC=localhost:1", "RAGDEMO_METRICS_HOST=localhost", "RAGDEMO_METRICS_PORT=2", "RAGDEMO_SINK=localhost:3", "RAGDEMO_ZPAGES=localhost:5"} {
		if !strings.Contains(strings.Join(envs, " "), want) {
			t.Errorf("collector environment %v lacks %s", envs, want)
		}
	}
}

// Without -collector, the addresses are examples/demo.yaml's, or the
// RAGDEMO_* variables the running collector was started with.
func TestResolveAddrsRunning(t *testing.T) {
	a, err := resolveAddrs(options{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a != (addrs{defaultOTLP, defaultOTLPHTTP, defaultHealth, defaultMetrics, defaultZPages, defaultSink}) {
		t.Errorf("defaults %+v", a)
	}
	a, err = resolveAddrs(options{}, env(map[string]string{"RAGDEMO_METRICS_PORT": "9999", "RAGDEMO_SINK": "localhost:7"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.metrics != "localhost:9999" || a.sink != "localhost:7" {
		t.Errorf("from the environment: %+v", a)
	}
	for _, bad := range []string{"8888", "http:///metrics", "localhost:http"} {
		if _, err := resolveAddrs(options{metrics: bad}, env(nil)); err == nil {
			t.Errorf("-metrics %q accepted", bad)
		}
	}
}

// The bug a tester found: with a port of the demo's collector already taken
// — here by a process that answers health checks, as another collector
// would — the collector the demo started exited, and the demo went on with
// the other process. Now it refuses before starting anything, and says
// which port and how to move it.
func TestRefusesTakenPort(t *testing.T) {
	taken := impostor(t, "127.0.0.1:0")
	// A stand-in binary: the check comes before anything is started.
	fake := filepath.Join(t.TempDir(), "otelcol-ragprecision")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := options{collector: fake, config: filepath.Join(moduleRoot, "examples", "demo.yaml"), health: taken,
		startTimeout: time.Second, spanTimeout: time.Second}
	var out bytes.Buffer
	err := run(context.Background(), o, &out)
	if err == nil {
		t.Fatalf("the demo ran with %s taken:\n%s", taken, out.String())
	}
	for _, want := range []string{taken, "health_check", "another process listens there", "-health HOST:PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("the demo started something:\n%s", out.String())
	}

	// Two listeners given the same address are refused too.
	err = checkFree([]listener{{"127.0.0.1:1", "a", "-a"}, {"127.0.0.1:1", "b", "-b"}})
	if err == nil || !strings.Contains(err.Error(), "given both to the a and to the b") {
		t.Errorf("duplicate: %v", err)
	}
}

// httpListener returns the address of a port held for the test.
func httpListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// Without -collector and with nothing running, the demo says how to start
// a collector.
func TestNoCollectorRunning(t *testing.T) {
	health := httpListener(t) // bound, never answering: nothing healthy there
	var out bytes.Buffer
	err := run(context.Background(), options{health: health, sink: "127.0.0.1:0", startTimeout: 300 * time.Millisecond}, &out)
	if err == nil || !strings.Contains(err.Error(), "bin/otelcol-ragprecision --config examples/demo.yaml") ||
		!strings.Contains(err.Error(), "-collector bin/otelcol-ragprecision") {
		t.Errorf("got %v", err)
	}
}
