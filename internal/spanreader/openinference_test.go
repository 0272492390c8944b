package spanreader

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// Bedrock Knowledge Bases through OpenInference
// (TestNPMInstrumentations runs the real instrumentation): Retrieve is a
// RETRIEVER span; RetrieveAndGenerate is one that names its model, whose
// documents are the answer's citations: no retrieval (at a trace's root,
// its output.value is the trace's answer).
func TestBedrockKnowledgeBaseSpans(t *testing.T) {
	r := New(Keys{}, limits)
	retrieve := newSpan()
	a := retrieve.Attributes()
	a.PutStr("openinference.span.kind", "RETRIEVER")
	a.PutStr("llm.provider", "aws")
	a.PutStr("input.value", "What is the capital of France?")
	a.PutStr("llm.invocation_parameters", `{"knowledgeBaseId":"KB1","retrievalConfiguration":{"vectorSearchConfiguration":{"numberOfResults":2}}}`)
	for i, c := range []string{"Oslo is in Norway.", "Paris is in France."} {
		p := "retrieval.documents." + string(rune('0'+i)) + ".document."
		a.PutStr(p+"content", c)
		a.PutStr(p+"id", "chunk"+string(rune('0'+i)))
		a.PutDouble(p+"score", 0)
		a.PutStr(p+"metadata", `{"location":{},"metadata":{},"type":"TEXT"}`)
	}
	d, ret, err := read(t, r, retrieve)
	if d != DialectOpenInference || err != nil || ret.Query != "What is the capital of France?" ||
		!reflect.DeepEqual(ret.Chunks, []string{"Oslo is in Norway.", "Paris is in France."}) {
		t.Fatalf("retrieve: %q %+v %v", d, ret, err)
	}

	rag := newSpan()
	retrieve.Attributes().CopyTo(rag.Attributes())
	rag.Attributes().PutStr("llm.model_name", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0")
	rag.Attributes().PutStr("output.value", "Paris.")
	if d, ok := r.Recognise(rag); ok {
		t.Errorf("retrieve and generate recognised as %q", d)
	}
	rag.SetParentSpanID(pcommon.SpanID{})
	if a, ok := r.TraceAnswer(rag); !ok || a.Text != "Paris." {
		t.Errorf("retrieve and generate at the root: answer %q %v", a.Text, ok)
	}
	// A retriever with an output but no model is a retrieval.
	rag.Attributes().Remove("llm.model_name")
	if d, ok := r.Recognise(rag); !ok || d != DialectOpenInference {
		t.Errorf("retriever with an output: %q %v", d, ok)
	}
}
