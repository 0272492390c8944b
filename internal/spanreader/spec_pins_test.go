package spanreader

// Pins of SPEC.md §3 that TestRecogniseOrder and the dialect tests left
// open.

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Readers are tried in SPEC §3's order, the first that recognises the span
// wins: every earlier dialect beats every later one, OpenLLMetry's events
// and documents included, and the winner's fields are the ones read.
func TestSpecEveryEarlierDialectWins(t *testing.T) {
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

// GenAI documents hold their text in content, else in text: content wins
// when a document has both, in either encoding and either key order.
func TestSpecGenAIContentBeforeText(t *testing.T) {
	asJSON := func(m pcommon.Map) {
		m.PutStr("gen_ai.retrieval.documents", `[{"text": "T1", "content": "C1"}, {"content": "C2", "text": "T2"}, {"text": "T3"}]`)
	}
	asMaps := func(m pcommon.Map) {
		docs := m.PutEmptySlice("gen_ai.retrieval.documents")
		d := docs.AppendEmpty().SetEmptyMap()
		d.PutStr("text", "T1")
		d.PutStr("content", "C1")
		d = docs.AppendEmpty().SetEmptyMap()
		d.PutStr("content", "C2")
		d.PutStr("text", "T2")
		docs.AppendEmpty().SetEmptyMap().PutStr("text", "T3")
	}
	for name, set := range map[string]func(pcommon.Map){"JSON string": asJSON, "array of maps": asMaps} {
		s := newSpan()
		s.Attributes().PutStr("gen_ai.operation.name", "retrieval")
		s.Attributes().PutStr("gen_ai.retrieval.query.text", "q")
		set(s.Attributes())
		d, ret, err := read(t, New(Keys{}, limits), s)
		if d != DialectGenAI || err != nil || ret.Query != "q" || !reflect.DeepEqual(ret.Chunks, []string{"C1", "C2", "T3"}) {
			t.Errorf("%s: %q %+v %v", name, d, ret, err)
		}
	}
}
