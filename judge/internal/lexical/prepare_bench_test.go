package lexical

import "testing"

// BenchmarkPrepare analyses the query and the reference of the span
// benchmarks: the part of a span's cost that does not depend on its chunks.
func BenchmarkPrepare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		DefaultParams().Prepare(benchQuery, benchReference)
	}
}
