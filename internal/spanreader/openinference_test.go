package spanreader

import (
	"reflect"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzOpenInference: flattened documents under any index, a retriever's
// or a reranker's (n's high bit), with its input documents (n's next bit).
func FuzzOpenInference(f *testing.F) {
	seeds(f)
	// Rerankers with input documents: contiguous, sparse, of other types.
	f.Add("Paris.", "Bananas.", "", uint8(0), uint8(128+64+3))
	f.Add("Paris.", "Bananas.", "", uint8(7), uint8(128+64+2))
	f.Add("Paris.", "Bananas.", "", uint8(36), uint8(128+64+4))
	f.Fuzz(func(t *testing.T, content, query, index string, kind, n uint8) {
		s := ptrace.NewSpan()
		kindName, prefix := "RETRIEVER", "retrieval.documents."
		if n&128 != 0 {
			kindName, prefix = "RERANKER", "reranker.output_documents."
			putFuzzed(s.Attributes(), "reranker.query", kind, query)
		}
		s.Attributes().PutStr("openinference.span.kind", kindName)
		putFuzzed(s.Attributes(), "input.value", kind, query)
		for i := range int(n % 16) {
			putFuzzed(s.Attributes(), prefix+index+string(rune('0'+i))+".document.content", kind/6, content)
			if n&64 != 0 {
				putFuzzed(s.Attributes(), "reranker.input_documents."+strconv.Itoa(i*int(kind))+".document.content", kind/36, query)
			}
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

// An OpenInference RERANKER span (the semantic conventions' reranker.*
// attributes) is scored on its output ranking, with reranker.query as its
// query; its input documents are not the ranking, but its input ranking,
// read to the output's depth.
func TestOpenInferenceReranker(t *testing.T) {
	s := newSpan()
	a := s.Attributes()
	a.PutStr("openinference.span.kind", "RERANKER")
	a.PutStr("reranker.query", "What is the capital of France?")
	a.PutStr("reranker.model_name", "cross-encoder/ms-marco-MiniLM-L-6-v2")
	a.PutInt("reranker.top_k", 2)
	a.PutStr("input.value", `{"query": "What is the capital of France?"}`)
	for i, text := range []string{"Bananas are yellow.", "Paris is the capital of France.", "Oslo is in Norway."} {
		a.PutStr("reranker.input_documents."+strconv.Itoa(i)+".document.content", text)
		a.PutStr("reranker.input_documents."+strconv.Itoa(i)+".document.id", strconv.Itoa(i))
	}
	a.PutStr("reranker.output_documents.1.document.content", "Oslo is in Norway.")
	a.PutDouble("reranker.output_documents.1.document.score", 0.2)
	a.PutStr("reranker.output_documents.0.document.content", "Paris is the capital of France.")
	a.PutDouble("reranker.output_documents.0.document.score", 0.9)
	d, ret, err := read(t, New(Keys{}, limits), s)
	if d != DialectOpenInference || err != nil || ret.Query != "What is the capital of France?" ||
		!reflect.DeepEqual(ret.Chunks, []string{"Paris is the capital of France.", "Oslo is in Norway."}) ||
		!reflect.DeepEqual(ret.RerankInput, []string{"Bananas are yellow.", "Paris is the capital of France."}) {
		t.Fatalf("%q %+v %v", d, ret, err)
	}
	// Without output documents there is nothing to score: a candidate
	// with status no_chunks, never its input judged in their place.
	empty := newSpan()
	empty.Attributes().PutStr("openinference.span.kind", "RERANKER")
	empty.Attributes().PutStr("reranker.input_documents.0.document.content", "Paris is the capital of France.")
	if d, ret, err := read(t, New(Keys{}, limits), empty); d != DialectOpenInference || err != ErrNoChunks {
		t.Errorf("no output documents: %q %+v %v, want no_chunks", d, ret, err)
	}
}

// A reranker's input ranking is read in the order of its indices, cut to
// the output's depth (top_k cuts the output first), and left out, with the
// output scored all the same, when it is shorter than the output or does
// not fit in max_bytes beside it.
func TestOpenInferenceRerankerInput(t *testing.T) {
	span := func(input map[int]string, output ...string) ptrace.Span {
		s := newSpan()
		a := s.Attributes()
		a.PutStr("openinference.span.kind", "RERANKER")
		a.PutStr("reranker.query", "q")
		for i, text := range input {
			a.PutStr("reranker.input_documents."+strconv.Itoa(i)+".document.content", text)
		}
		for i, text := range output {
			a.PutStr("reranker.output_documents."+strconv.Itoa(i)+".document.content", text)
		}
		return s
	}
	input := map[int]string{7: "d", 0: "a", 3: "c", 1: "b"}
	for _, tc := range []struct {
		name   string
		lim    Limits
		input  map[int]string
		output []string
		want   []string
	}{
		{"sparse indices", limits, input, []string{"c", "a"}, []string{"a", "b"}},
		{"as deep as the output", limits, input, []string{"d", "c", "b", "a"}, []string{"a", "b", "c", "d"}},
		{"top_k cuts the output, then the input", Limits{TopK: 1, MaxChunks: 10, MaxBytes: 1000}, input, []string{"c", "a"}, []string{"a"}},
		{"shorter than the output", limits, map[int]string{0: "a"}, []string{"a", "b"}, nil},
		{"no input", limits, nil, []string{"a"}, nil},
		{"over max_bytes", Limits{MaxChunks: 10, MaxBytes: 3}, input, []string{"c", "a"}, nil},
	} {
		_, ret, err := read(t, New(Keys{}, tc.lim), span(tc.input, tc.output...))
		if err != nil || !reflect.DeepEqual(ret.RerankInput, tc.want) {
			t.Errorf("%s: input %q %v, want %q", tc.name, ret.RerankInput, err, tc.want)
		}
	}
	// A retriever's documents are never an input ranking.
	s := newSpan()
	s.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	s.Attributes().PutStr("retrieval.documents.0.document.content", "a")
	s.Attributes().PutStr("reranker.input_documents.0.document.content", "a")
	if _, ret, err := read(t, New(Keys{}, limits), s); err != nil || ret.RerankInput != nil {
		t.Errorf("retriever: input %q %v", ret.RerankInput, err)
	}
}
