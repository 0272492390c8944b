package spanreader

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// springAISpan is a vector store query span as Spring AI's observation
// conventions describe it (spring-ai's observability docs and
// VectorStoreObservationDocumentation, 1.0.0): a pgvector query of top-k 3.
func springAISpan(operation string) ptrace.Span {
	s := newSpan()
	s.SetName("pg_vector " + operation)
	s.SetKind(ptrace.SpanKindClient)
	a := s.Attributes()
	a.PutStr("spring.ai.kind", "vector_store")
	a.PutStr("db.operation.name", operation)
	a.PutStr("db.system", "pg_vector")
	a.PutStr("db.collection.name", "vector_store")
	a.PutStr("db.namespace", "public")
	a.PutStr("db.search.similarity_metric", "cosine")
	a.PutInt("db.vector.dimension_count", 1536)
	if operation == "query" {
		a.PutStr("db.vector.query.content", "What is the capital of France?")
		a.PutInt("db.vector.query.top_k", 3)
		a.PutDouble("db.vector.query.similarity_threshold", 0)
	}
	return s
}

// The documents of a query, in the two shapes of the 1.0.0 milestones: the
// attribute db.vector.query.response.documents (Spring AI's join, which
// escapes nothing, or a JSON array), and the earlier
// db.vector.content.query.response event with a string array.
func TestSpringAIQueryDocuments(t *testing.T) {
	want := []string{`Paris is the capital of France.`, `The "City of Light" sits on the Seine.`, `Bananas are yellow.`}
	for name, put := range map[string]func(ptrace.Span){
		"attribute, Spring's join": func(s ptrace.Span) {
			s.Attributes().PutStr("db.vector.query.response.documents",
				`["Paris is the capital of France.", "The "City of Light" sits on the Seine.", "Bananas are yellow."]`)
		},
		"attribute, a JSON array": func(s ptrace.Span) {
			s.Attributes().PutStr("db.vector.query.response.documents",
				`["Paris is the capital of France.", "The \"City of Light\" sits on the Seine.", "Bananas are yellow."]`)
		},
		"attribute, an array": func(s ptrace.Span) {
			strSlice(s.Attributes(), "db.vector.query.response.documents", want...)
		},
		"event": func(s ptrace.Span) {
			e := s.Events().AppendEmpty()
			e.SetName("db.vector.content.query.response")
			strSlice(e.Attributes(), "db.vector.query.content", want...)
		},
	} {
		s := springAISpan("query")
		put(s)
		d, ret, err := read(t, New(Keys{}, limits), s)
		if d != DialectSpringAI || err != nil || ret.Query != "What is the capital of France?" || !reflect.DeepEqual(ret.Chunks, want) {
			t.Errorf("%s: %q %+v %v", name, d, ret, err)
		}
	}
}

// Adds, deletes, and queries whose documents are not on the span (from
// 1.0.0-RC1 on Spring AI only logs them) are no retrievals; nor is a span
// of another kind with the documents attribute.
func TestSpringAIWithoutDocuments(t *testing.T) {
	r := New(Keys{}, limits)
	for _, op := range []string{"add", "delete", "query"} {
		if d, ok := r.Recognise(springAISpan(op)); ok {
			t.Errorf("%s recognised as %q", op, d)
		}
	}
	s := newSpan()
	s.Attributes().PutStr("spring.ai.kind", "chat_client")
	s.Attributes().PutStr("db.vector.query.response.documents", `["a"]`)
	if d, ok := r.Recognise(s); ok {
		t.Errorf("chat client recognised as %q", d)
	}
}

// Spring's join is read within the limits, the documents after TopK left
// out whole.
func TestSpringAIJoinLimits(t *testing.T) {
	s := springAISpan("query")
	s.Attributes().PutStr("db.vector.query.response.documents", `["a", "b "c"", "d"]`)
	for _, tc := range []struct {
		lim  Limits
		want []string
		err  error
	}{
		{Limits{MaxChunks: 10, MaxBytes: 100}, []string{"a", `b "c"`, "d"}, nil},
		{Limits{TopK: 2, MaxChunks: 10, MaxBytes: 100}, []string{"a", `b "c"`}, nil},
		{Limits{TopK: 1, MaxChunks: 1, MaxBytes: 100}, []string{"a"}, nil},
		{Limits{MaxChunks: 2, MaxBytes: 100}, nil, ErrTooLarge},
		{Limits{MaxChunks: 10, MaxBytes: 20}, nil, ErrTooLarge},
	} {
		_, ret, err := read(t, New(Keys{}, tc.lim), s)
		if err != tc.err || !reflect.DeepEqual(ret.Chunks, tc.want) {
			t.Errorf("%+v: %q %v, want %q %v", tc.lim, ret.Chunks, err, tc.want, tc.err)
		}
	}
}

// FuzzSpringAI: documents of any type and content, on the span or in the
// event.
func FuzzSpringAI(f *testing.F) {
	seeds(f)
	f.Add(`["a", "b"]`, "q", "", uint8(0), uint8(0))
	f.Add(`[""]`, "q", "", uint8(0), uint8(1))
	f.Add(`["", ""`, "q", "", uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, docs, query, kind string, typ, where uint8) {
		s := ptrace.NewSpan()
		s.Attributes().PutStr("spring.ai.kind", "vector_store")
		putFuzzed(s.Attributes(), "db.vector.query.content", typ/6, query)
		if where%2 == 0 {
			putFuzzed(s.Attributes(), "db.vector.query.response.documents", typ, docs)
		} else {
			e := s.Events().AppendEmpty()
			e.SetName("db.vector.content.query.response")
			putFuzzed(e.Attributes(), "db.vector.query.content", typ, docs)
		}
		if where&2 != 0 {
			s.Attributes().PutStr("spring.ai.kind", kind)
		}
		if where&4 != 0 {
			s.SetParentSpanID(pcommon.SpanID{1})
		}
		check(t, Keys{}, fuzzLimits, s)
	})
}
