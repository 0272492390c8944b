// Package passbench holds what the pass-through benchmarks of the processor
// and of its span reader share: the baselines a span's pass-through is
// measured against, and the loop that times them and the code under test
// interleaved, batch by batch, so that other processes on the machine
// disturb all of them alike. Only benchmarks import it.
package passbench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The baselines, from the least work to the most. Each returns a number
// that depends on what it read, which the caller keeps (see Sink), so that
// the compiler cannot drop the work.
//
//   - Keys walks a span's attributes and reads each key's length only,
//     without looking at the values: the floor of any loop over them.
//   - Walk also reads each value's type, which is what any processor that
//     looks at attributes pays (the value is a pointer away from its key):
//     the "bare attribute walk" of docs/BENCHMARKS.md.
//   - Read also reads every byte of every string value, once, at memory
//     speed (strings.IndexByte, a vector instruction, for a byte no value
//     holds): the least a processor pays that must look inside values, as
//     one must to tell a retriever's JSON output from any other JSON.

// Keys is the walk over a span's attribute keys.
func Keys(s ptrace.Span) int {
	n := 0
	for k := range s.Attributes().All() {
		n += len(k)
	}
	return n
}

// Walk is the walk over a span's attribute keys and value types.
func Walk(s ptrace.Span) int {
	n := 0
	for k, v := range s.Attributes().All() {
		n += len(k) + int(v.Type())
	}
	return n
}

// Read is Walk that also reads every string value.
func Read(s ptrace.Span) int {
	n := 0
	for k, v := range s.Attributes().All() {
		t := v.Type()
		n += len(k) + int(t)
		if t == pcommon.ValueTypeStr {
			n += strings.IndexByte(v.Str(), 0)
		}
	}
	return n
}

// Sink keeps the baselines' results.
var Sink int

// Interleaved times each of batches (one call handles one batch of
// spansPerBatch spans) in turn, every iteration, and reports for each the
// ns per span of its fastest batch, the one least disturbed by other
// processes, as "<name>-ns/span"; and for each that is not one of the
// baselines (Noop, Keys, Walk, Read, named "noop", "keys", "walk" and
// "read"), its ratio to each baseline but the no-op, as
// "<name>-x-<baseline>". It returns the ns per span of each.
func Interleaved(b *testing.B, spansPerBatch int, names []string, batches ...func()) []float64 {
	if len(names) != len(batches) {
		b.Fatalf("%d names for %d batches", len(names), len(batches))
		return nil
	}
	fastest := make([]time.Duration, len(batches))
	for i := range fastest {
		fastest[i] = time.Hour
	}
	for b.Loop() {
		for i, batch := range batches {
			start := time.Now()
			batch()
			fastest[i] = min(fastest[i], time.Since(start))
		}
	}
	perSpan := func(i int) float64 { return float64(fastest[i].Nanoseconds()) / float64(spansPerBatch) }
	for i, n := range names {
		b.ReportMetric(perSpan(i), n+"-ns/span")
	}
	for i, n := range names {
		if slices.Contains(baselines, n) {
			continue
		}
		for j, base := range names {
			if base != "noop" && slices.Contains(baselines, base) {
				b.ReportMetric(perSpan(i)/perSpan(j), n+"-x-"+base)
			}
		}
	}
	b.ReportMetric(0, "ns/op") // the sum of the above over a batch: not meaningful
	out := make([]float64, len(batches))
	for i := range out {
		out[i] = perSpan(i)
	}
	return out
}

var baselines = []string{"noop", "keys", "walk", "read"}

// Noop is a call that does nothing: the cost of the benchmark's own loop.
//
//go:noinline
func Noop(ptrace.Span) int { return 0 }

// ForSpans is a batch function that calls per on every span of spans.
func ForSpans(spans []ptrace.Span, per func(ptrace.Span) int) func() {
	return func() {
		n := 0
		for _, s := range spans {
			n += per(s)
		}
		Sink += n
	}
}
