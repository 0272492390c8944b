package spanreader

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// wrongTyped puts each kind of chunks that hold no text: arrays of ints,
// bools and doubles, a scalar of each, and JSON arrays of them.
var wrongTyped = map[string]func(pcommon.Map, string){
	"int array":    func(m pcommon.Map, k string) { _ = m.PutEmptySlice(k).FromRaw([]any{int64(1), int64(2), int64(3)}) },
	"bool array":   func(m pcommon.Map, k string) { _ = m.PutEmptySlice(k).FromRaw([]any{true, false}) },
	"double array": func(m pcommon.Map, k string) { _ = m.PutEmptySlice(k).FromRaw([]any{0.5, 1.5}) },
	"mixed array":  func(m pcommon.Map, k string) { _ = m.PutEmptySlice(k).FromRaw([]any{int64(1), true, 2.5}) },
	"int":          func(m pcommon.Map, k string) { m.PutInt(k, 1) },
	"bool":         func(m pcommon.Map, k string) { m.PutBool(k, true) },
	"double":       func(m pcommon.Map, k string) { m.PutDouble(k, 0.5) },
	"JSON ints":    func(m pcommon.Map, k string) { m.PutStr(k, "[1, 2, 3]") },
	"JSON bools":   func(m pcommon.Map, k string) { m.PutStr(k, "[true, false]") },
	"JSON doubles": func(m pcommon.Map, k string) { m.PutStr(k, "[0.5, 1.5]") },
	"JSON mixed":   func(m pcommon.Map, k string) { m.PutStr(k, `[1, null, {"id": 2}]`) },
	"objects of numbers": func(m pcommon.Map, k string) {
		_ = m.PutEmptySlice(k).FromRaw([]any{map[string]any{"content": int64(1)}, map[string]any{"text": 2.5}})
	},
}

// noTextIsNoChunks checks that a span whose chunks hold no text is
// recognised, and read as ErrNoChunks: never judged, and counted in the
// funnel as no_chunks.
func noTextIsNoChunks(t *testing.T, name string, r *Reader, s ptrace.Span) {
	t.Helper()
	d, ok := r.Recognise(s)
	if !ok {
		t.Errorf("%s: not recognised, want a retrieval with no chunks", name)
		return
	}
	if ret, err := r.Read(s, d); !errors.Is(err, ErrNoChunks) || ret.Chunks != nil {
		t.Errorf("%s: read as %q: %q %v, want no chunks", name, d, ret.Chunks, err)
	}
}

func TestWrongTypedChunksOfProjectKeys(t *testing.T) {
	r := New(Keys{Chunks: "app.chunks"}, limits)
	for kind, put := range wrongTyped {
		for _, key := range []string{"rag.chunks", "app.chunks"} {
			s := newSpan()
			s.Attributes().PutStr("rag.query", "capital of France?")
			put(s.Attributes(), key)
			d, ok := r.Recognise(s)
			if !ok {
				t.Errorf("%s in %s: not recognised", kind, key)
				continue
			}
			if ret, err := r.Read(s, d); !errors.Is(err, ErrNoChunks) || ret.Chunks != nil {
				t.Errorf("%s in %s: %q %v, want ErrNoChunks", kind, key, ret.Chunks, err)
			}
		}
	}
}

func TestWrongTypedChunksOfDialects(t *testing.T) {
	r := New(Keys{}, limits)
	for kind, put := range wrongTyped {
		genai := newSpan()
		genai.Attributes().PutStr("gen_ai.operation.name", "retrieval")
		put(genai.Attributes(), "gen_ai.retrieval.documents")
		noTextIsNoChunks(t, "gen_ai "+kind, r, genai)

		// A document's own text field (OpenInference's document.content,
		// Pinecone's metadata text) holds one document: a string there is
		// its text even when it reads as JSON.
		oneDocument := !strings.HasPrefix(kind, "JSON")
		if oneDocument {
			oi := newSpan()
			oi.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
			put(oi.Attributes(), "retrieval.documents.0.document.content")
			put(oi.Attributes(), "retrieval.documents.1.document.content")
			noTextIsNoChunks(t, "openinference "+kind, r, oi)
		}

		ollm := newSpan()
		for range 2 {
			e := ollm.Events().AppendEmpty()
			e.SetName("db.query.result")
			put(e.Attributes(), "db.query.result.document")
		}
		noTextIsNoChunks(t, "openllmetry db.query.result "+kind, r, ollm)

		if oneDocument {
			pinecone := newSpan()
			pinecone.Events().AppendEmpty().SetName("pinecone.query.result")
			e := pinecone.Events().AppendEmpty()
			e.SetName("pinecone.query.result.0.metadata")
			put(e.Attributes(), "text")
			noTextIsNoChunks(t, "pinecone metadata "+kind, r, pinecone)
		}

		qdrant := newSpan()
		qdrant.Attributes().PutStr("db.system", "qdrant")
		put(qdrant.Attributes(), "db.vector.query.result.0.metadata")
		// Qdrant's payloads are JSON objects in strings: a payload of
		// another type holds no text. (A string payload is looked into for
		// its text fields; without them it is no retrieval.)
		if oneDocument {
			noTextIsNoChunks(t, "qdrant payload "+kind, r, qdrant)
		}

		cohere := newSpan()
		cohere.Attributes().PutStr("llm.request.type", "rerank")
		cohere.Attributes().PutStr("gen_ai.prompt.0.user", "capital of France?")
		// The exception: a Cohere rerank's gen_ai.completion.{i}.content
		// holds numbers when the instrumentation's content tracing is off
		// (the input index of each result), which is a choice, not a wrong
		// type: no retrieval, as a vector store's spans without text are.
		// (A string there is a document's text, even when it reads as JSON.)
		if oneDocument {
			put(cohere.Attributes(), "gen_ai.completion.0.content")
			if d, ok := r.Recognise(cohere); ok {
				t.Errorf("cohere rerank %s: recognised as %q, want no retrieval", kind, d)
			}
		}

		reranker := newSpan()
		reranker.Attributes().PutStr("openinference.span.kind", "RERANKER")
		reranker.Attributes().PutStr("reranker.query", "capital of France?")
		if oneDocument {
			put(reranker.Attributes(), "reranker.output_documents.0.document.content")
			noTextIsNoChunks(t, "openinference reranker "+kind, r, reranker)
		}

		spring := springAISpan("query")
		put(spring.Attributes(), "db.vector.query.response.documents")
		noTextIsNoChunks(t, "spring ai attribute "+kind, r, spring)

		springEvent := springAISpan("query")
		e := springEvent.Events().AppendEmpty()
		e.SetName("db.vector.content.query.response")
		put(e.Attributes(), "db.vector.query.content")
		noTextIsNoChunks(t, "spring ai event "+kind, r, springEvent)
	}
}

// A non-text element among text ones keeps its rank as an empty chunk, so
// that the ranks of the others stay right; a plain string that is not JSON
// is one chunk.
func TestNonTextElementKeepsItsRank(t *testing.T) {
	r := New(Keys{}, limits)
	for name, tc := range map[string]struct {
		put  func(pcommon.Map)
		want []string
	}{
		"array": {func(m pcommon.Map) {
			_ = m.PutEmptySlice("rag.chunks").FromRaw([]any{int64(7), "Paris is the capital.", true})
		}, []string{"", "Paris is the capital.", ""}},
		"JSON":         {func(m pcommon.Map) { m.PutStr("rag.chunks", `[7, "Paris is the capital."]`) }, []string{"", "Paris is the capital."}},
		"plain string": {func(m pcommon.Map) { m.PutStr("rag.chunks", "Paris is the capital.") }, []string{"Paris is the capital."}},
	} {
		s := newSpan()
		tc.put(s.Attributes())
		_, ret, err := read(t, r, s)
		if err != nil || !reflect.DeepEqual(ret.Chunks, tc.want) {
			t.Errorf("%s: %q %v, want %q", name, ret.Chunks, err, tc.want)
		}
	}
}
