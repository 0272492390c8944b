package main

import (
	"strings"
	"testing"
)

const sampleOutput = `goos: linux
pkg: github.com/ragprecision/ragprecision/processor/ragprecisionprocessor
BenchmarkPassThrough/baseline-2         	1000000	      1000 ns/op	        10.00 ns/span	       0 B/op	       0 allocs/op
BenchmarkPassThrough/walk-2             	 100000	     10000 ns/op	       100.0 ns/span	       0 B/op	       0 allocs/op
BenchmarkPassThrough/ragprecision-2     	  50000	     15000 ns/op	       150.0 ns/span	       0 B/op	       0 allocs/op
BenchmarkPassThrough/walk,_plain_spans-2         	    3000	       904.7 ns/op	         9.047 ns/span	       0 B/op	       0 allocs/op
BenchmarkPassThrough/ragprecision,_plain_spans-2 	    3000	      1814 ns/op	        18.14 ns/span	       0 B/op	       0 allocs/op
PASS
pkg: github.com/ragprecision/ragprecision/judge
BenchmarkJudgedThroughput/chunks=4-2    	      64	  51764531 ns/op	        20.00 limit-spans/s	         0.9659 of-limit	        19.32 spans/s
BenchmarkCacheHit/chunks=5/openai-2     	  148537	      9259 ns/op	        59.58 x-map-lookup	    4320 B/op	      33 allocs/op
--- FAIL: BenchmarkBroken
ok  	github.com/ragprecision/ragprecision/judge	7.333s
`

func TestParseAndSummariseBenchOutput(t *testing.T) {
	lines := parseBenchOutput(sampleOutput)
	if len(lines) != 7 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	if l := lines[5]; l.pkg != "github.com/ragprecision/ragprecision/judge" || l.name != "JudgedThroughput/chunks=4" || l.metrics["of-limit"] != 0.9659 {
		t.Fatalf("%+v", l)
	}
	var b strings.Builder
	writeMicro(&b, lines)
	out := b.String()
	for _, want := range []string{
		"pass-through, every span with a JSON traceloop.entity.output: 150.0 ns/span = 1.50× a bare attribute walk (100.0 ns/span), 0 allocs",
		"pass-through, plain spans: 18.1 ns/span = 2.01× a bare attribute walk (9.0 ns/span), 0 allocs",
		"chunks=4: 19.3 spans/s = 0.966 of the Little's-law limit 20 spans/s",
		"cache hit, chunks=5/openai: 9259 ns per judgement = 60× a bare map lookup per chunk, 33 allocs",
		"| judge | CacheHit/chunks=5/openai | 9259 | 33 | 59.58 x-map-lookup |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
