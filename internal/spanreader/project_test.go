package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzProject: rag.* keys of any type and content.
func FuzzProject(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, chunks, query, ref string, kind, topK uint8) {
		s := ptrace.NewSpan()
		putFuzzed(s.Attributes(), "rag.chunks", kind, chunks)
		putFuzzed(s.Attributes(), "rag.query", kind/6, query)
		putFuzzed(s.Attributes(), "rag.reference", kind/36, ref)
		check(t, Keys{}, Limits{TopK: int(topK % 4), MaxChunks: fuzzLimits.MaxChunks, MaxBytes: fuzzLimits.MaxBytes}, s)
	})
}
