package main

import (
	"io"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/loadgen"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"-batch", "100", "-dialects", "project=1,openllmetry=3", "-repeat", "0.2", "-pidof", "otelcol-ragprecision"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tr := o.load.Traffic
	if tr.BatchSize != 100 || tr.Dialects[loadgen.DialectOpenLLMetry] != 3 || tr.RepeatShare != 0.2 || o.pidof != "otelcol-ragprecision" || o.load.Senders != 4 {
		t.Fatalf("%+v", o)
	}
	for _, bad := range [][]string{
		{"-dialects", "nope"},
		{"-retrieval", "1.5"},
		{"-pid", "1", "-pidof", "x"},
		{"-duration", "0"},
		{"stray"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// A whole run against a counting sink: the report counts what was sent.
func TestRunReports(t *testing.T) {
	sink, err := otlpsink.StartCounting("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	o, err := parseFlags([]string{"-endpoint", sink.Addr(), "-senders", "2", "-warmup", "0s", "-spans", "2048"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(o, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " 2048 spans accepted (204 retrieval spans)") {
		t.Fatalf("report:\n%s", out.String())
	}
	if sink.Spans() != 2048 {
		t.Fatalf("the sink counted %d spans", sink.Spans())
	}
}
