package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzGenAI: documents and output messages of any type and content.
func FuzzGenAI(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, docs, query, output string, kind, _ uint8) {
		s := ptrace.NewSpan()
		s.Attributes().PutStr("gen_ai.operation.name", "retrieval")
		putFuzzed(s.Attributes(), "gen_ai.retrieval.documents", kind, docs)
		putFuzzed(s.Attributes(), "gen_ai.retrieval.query.text", kind/6, query)
		putFuzzed(s.Attributes(), "gen_ai.output.messages", kind/36, output)
		check(t, Keys{}, fuzzLimits, s)
	})
}
