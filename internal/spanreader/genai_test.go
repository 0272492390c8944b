package spanreader

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// GenAI documents hold their text in content, else in text: content wins
// when a document has both, in either encoding and either key order.
func TestGenAIContentBeforeText(t *testing.T) {
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
