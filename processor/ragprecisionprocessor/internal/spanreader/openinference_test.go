package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzOpenInference: flattened documents under any index.
func FuzzOpenInference(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, content, query, index string, kind, n uint8) {
		s := ptrace.NewSpan()
		s.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
		putFuzzed(s.Attributes(), "input.value", kind, query)
		for i := range int(n % 16) {
			putFuzzed(s.Attributes(), "retrieval.documents."+index+string(rune('0'+i))+".document.content", kind/6, content)
		}
		putFuzzed(s.Attributes(), "output.value", kind/36, content)
		check(t, Keys{}, fuzzLimits, s)
	})
}

// A key that has the prefix and the suffix overlapping has no index.
func TestOpenInferenceKeyWithoutIndex(t *testing.T) {
	s := newSpan()
	s.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	s.Attributes().PutStr("retrieval.documents.document.content", "no index")
	s.Attributes().PutStr("retrieval.documents.0.document.content", "zero")
	_, ret, err := read(t, New(Keys{}, limits), s)
	if err != nil || len(ret.Chunks) != 1 || ret.Chunks[0] != "zero" {
		t.Fatalf("%q %v", ret.Chunks, err)
	}
}
