package main

import (
	"strings"
	"testing"
)

const sampleOutput = `goos: linux
pkg: github.com/ragprecision/ragprecision/processor/ragprecisionprocessor
BenchmarkPassThrough/worst_case-2             60399          8.410 keys-ns/span          0.2000 noop-ns/span         39.75 ragprecision-ns/span          4.727 ragprecision-x-keys          1.124 ragprecision-x-read          2.392 ragprecision-x-walk         35.35 read-ns/span         16.62 walk-ns/span        0 B/op        0 allocs/op
BenchmarkPassThrough/plain_spans-2            68938          7.910 keys-ns/span          0.2000 noop-ns/span         14.82 ragprecision-ns/span          1.874 ragprecision-x-keys          0.4774 ragprecision-x-read          0.9549 ragprecision-x-walk         31.04 read-ns/span         15.52 walk-ns/span        0 B/op        0 allocs/op
PASS
pkg: github.com/ragprecision/ragprecision/internal/spanreader
BenchmarkPassThrough/task/2KB_json-2 	106658	0 ns/op	6.210 keys-ns/span	1.5 noop-ns/span	61.79 read-ns/span	74.91 recognise-ns/span	12.06 recognise-x-keys	1.212 recognise-x-read	4.045 recognise-x-walk	18.52 walk-ns/span	0 B/op	0 allocs/op
pkg: github.com/ragprecision/ragprecision/judge
BenchmarkJudgedThroughput/chunks=4-2    	      64	  51764531 ns/op	        20.00 limit-spans/s	         0.9659 of-limit	        19.32 spans/s
BenchmarkCacheHit/chunks=5/openai-2     	  148537	      9259 ns/op	        59.58 x-map-lookup	    4320 B/op	      33 allocs/op
--- FAIL: BenchmarkBroken
ok  	github.com/ragprecision/ragprecision/judge	7.333s
`

func TestParseAndSummariseBenchOutput(t *testing.T) {
	lines := parseBenchOutput(sampleOutput)
	if len(lines) != 5 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	if l := lines[3]; l.pkg != "github.com/ragprecision/ragprecision/judge" || l.name != "JudgedThroughput/chunks=4" || l.metrics["of-limit"] != 0.9659 {
		t.Fatalf("%+v", l)
	}
	var b strings.Builder
	writeMicro(&b, lines)
	out := b.String()
	for _, want := range []string{
		"pass-through at the processor, worst case: 39.8 ns/span, 0 allocs per batch = 2.39× a bare attribute walk (keys and value types, 16.6 ns/span; target: ≤ 2×, 0 allocs), 4.73× a walk over the keys only (8.4), 1.12× a walk that reads every string value (35.4)",
		"pass-through at the processor, plain spans: 14.8 ns/span, 0 allocs per batch = 0.95× a bare attribute walk",
		"pass-through, Recognise of task/2KB_json: 74.9 ns/span, 0 allocs per batch = 4.04× a bare attribute walk (keys and value types, 18.5 ns/span; target: ≤ 2×, 0 allocs), 12.06× a walk over the keys only (6.2), 1.21× a walk that reads every string value (61.8)",
		"chunks=4: 19.3 spans/s = 0.966 of the Little's-law limit 20 spans/s",
		"cache hit, chunks=5/openai: 9259 ns per judgement = 60× a bare map lookup per chunk, 33 allocs",
		"| judge | CacheHit/chunks=5/openai | 9259 | 33 | 59.58 x-map-lookup |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
