package spanreader

import (
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The registry is the one place dialects are listed: check what it relies
// on, so that adding a dialect that breaks it fails here, not in a span.
func TestRegistry(t *testing.T) {
	seen := map[Dialect]bool{DialectAttributes: true}
	for i, d := range dialects {
		if seen[d.id()] {
			t.Errorf("dialect %d: id %q is taken", i, d.id())
		}
		seen[d.id()] = true
		w := d.watches()
		if len(w.attributes) > maxWatched || len(w.events) > maxWatched {
			t.Errorf("%s watches %d attributes and %d events, at most %d each", d.id(), len(w.attributes), len(w.events), maxWatched)
		}
		if len(w.attributes) == 0 && len(w.events) == 0 {
			t.Errorf("%s watches nothing: it can recognise no span", d.id())
		}
		if dialectIndex(d.id()) != i {
			t.Errorf("%s: index %d", d.id(), dialectIndex(d.id()))
		}
	}
	for d := range dialects {
		classifyAs(New(Keys{}, limits), d, &watched{}) // panics if it has no case for d
	}
	for _, a := range answerers {
		if a < 0 || a >= len(dialects) {
			t.Errorf("answerer %d is not a dialect", a)
		}
	}
	// The order of docs/SOURCES.md's dialect table.
	want := []Dialect{DialectProject, DialectGenAI, DialectOpenInference, DialectOpenLLMetry, DialectSpringAI}
	for i, d := range want {
		if dialects[i].id() != d {
			t.Errorf("dialect %d is %q, want %q", i, dialects[i].id(), d)
		}
	}
}

// A span scored upstream still gives its trace's answer.
func TestScoredSpanGivesAnswer(t *testing.T) {
	s := newSpan()
	s.SetParentSpanID([8]byte{})
	s.Attributes().PutStr("rag.contextual_precision.status", "scored")
	s.Attributes().PutStr("output.value", "A")
	if a, ok := New(Keys{}, limits).TraceAnswer(s); !ok || a.Text != "A" {
		t.Fatalf("%+v %v", a, ok)
	}
}

// The pass compares keys word by word: keys of every length, and keys that
// differ from a watched one in any single byte, are told apart.
func TestKeysAreComparedExactly(t *testing.T) {
	for n := 1; n <= 40; n++ {
		k := strings.Repeat("k", n)
		r := New(Keys{Chunks: k}, limits)
		s := ptrace.NewSpan()
		s.Attributes().PutStr(k, "c")
		if d, ok := r.Recognise(s); !ok || d != DialectAttributes {
			t.Fatalf("key of %d bytes not found", n)
		}
		for i := range n {
			b := []byte(k)
			b[i] = 'x'
			s := ptrace.NewSpan()
			s.Attributes().PutStr(string(b), "c")
			if _, ok := r.Recognise(s); ok {
				t.Fatalf("key of %d bytes differing at %d taken for it", n, i)
			}
		}
	}
}

// Readers are tried in docs/SOURCES.md's order, the first that recognises the span
// wins: every earlier dialect beats every later one, OpenLLMetry's events
// and documents included, and the winner's fields are the ones read.
func TestEveryEarlierDialectWins(t *testing.T) {
	openLLMetryEvents := func(s ptrace.Span) {
		e := s.Events().AppendEmpty()
		e.SetName("db.query.result")
		e.Attributes().PutStr("db.query.result.document", "from the event")
	}
	openLLMetryOutput := func(m pcommon.Map) {
		m.PutStr("traceloop.entity.output", `{"documents": [{"page_content": "from traceloop"}]}`)
	}
	project := func(m pcommon.Map) { strSlice(m, "rag.chunks", "from rag.chunks") }
	genAI := func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "retrieval")
		m.PutStr("gen_ai.retrieval.documents", `[{"content": "from gen_ai"}]`)
	}
	openInference := func(m pcommon.Map) {
		m.PutStr("openinference.span.kind", "RETRIEVER")
		m.PutStr("retrieval.documents.0.document.content", "from openinference")
	}
	for _, tc := range []struct {
		name   string
		attrs  []func(pcommon.Map)
		events bool
		want   Dialect
		chunk  string
	}{
		{"project beats openinference", []func(pcommon.Map){openInference, project}, false, DialectProject, "from rag.chunks"},
		{"project beats openllmetry", []func(pcommon.Map){openLLMetryOutput, project}, true, DialectProject, "from rag.chunks"},
		{"genai beats openllmetry events", []func(pcommon.Map){genAI}, true, DialectGenAI, "from gen_ai"},
		{"genai beats openllmetry output", []func(pcommon.Map){openLLMetryOutput, genAI}, false, DialectGenAI, "from gen_ai"},
		{"openinference beats openllmetry events", []func(pcommon.Map){openInference}, true, DialectOpenInference, "from openinference"},
		{"openinference beats openllmetry output", []func(pcommon.Map){openLLMetryOutput, openInference}, false, DialectOpenInference, "from openinference"},
	} {
		s := newSpan()
		for _, f := range tc.attrs {
			f(s.Attributes())
		}
		if tc.events {
			openLLMetryEvents(s)
		}
		d, ret, err := read(t, New(Keys{}, limits), s)
		if d != tc.want || err != nil || !reflect.DeepEqual(ret.Chunks, []string{tc.chunk}) {
			t.Errorf("%s: %q %q %v, want %q [%q]", tc.name, d, ret.Chunks, err, tc.want, tc.chunk)
		}
	}
}
