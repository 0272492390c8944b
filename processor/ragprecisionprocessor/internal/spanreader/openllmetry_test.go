package spanreader

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzOpenLLMetry: entity outputs and inputs, and query result events.
func FuzzOpenLLMetry(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, output, input, doc string, kind, events uint8) {
		s := ptrace.NewSpan()
		putFuzzed(s.Attributes(), "traceloop.entity.output", kind, output)
		putFuzzed(s.Attributes(), "traceloop.entity.input", kind/6, input)
		putFuzzed(s.Attributes(), "db.query.text", kind/36, input)
		if events&64 != 0 {
			s.Attributes().PutStr("llm.request.type", "chat")
		}
		if events&128 != 0 {
			s.SetParentSpanID(pcommon.SpanID{1})
		}
		for range int(events % 12) {
			e := s.Events().AppendEmpty()
			e.SetName("db.query.result")
			putFuzzed(e.Attributes(), "db.query.result.document", kind, doc)
		}
		check(t, Keys{}, fuzzLimits, s)
	})
}

// A model call's entity output is its answer: it is not looked into for
// documents, in whichever dialect the span says it is a model call. Query
// result events still make a retrieval.
func TestModelCallOutputsAreNotDocuments(t *testing.T) {
	r := New(Keys{}, limits)
	docs := `[{"page_content": "Paris is the capital of France."}]`
	for name, mark := range map[string]func(pcommon.Map){
		"openllmetry":   func(m pcommon.Map) { m.PutStr("llm.request.type", "chat") },
		"gen_ai":        func(m pcommon.Map) { m.PutStr("gen_ai.operation.name", "chat") },
		"openinference": func(m pcommon.Map) { m.PutStr("openinference.span.kind", "LLM") },
	} {
		s := newSpan()
		mark(s.Attributes())
		s.Attributes().PutStr("traceloop.entity.output", docs)
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s model call recognised as %q", name, d)
		}
		if a, ok := r.TraceAnswer(s); !ok || a.Text != docs {
			t.Errorf("%s model call: answer %q %v", name, a.Text, ok)
		}
		s.Events().AppendEmpty().SetName("db.query.result")
		if d, ok := r.Recognise(s); !ok || d != DialectOpenLLMetry {
			t.Errorf("%s model call with query results: %q %v", name, d, ok)
		}
	}
}

// Outputs are judged by their first and last bytes before they are read:
// only JSON can hold documents, and JSON cut short cannot be read.
func TestOutputShape(t *testing.T) {
	r := New(Keys{}, Limits{MaxChunks: 10, MaxBytes: 64})
	long := `{"documents": [{"page_content": "` + strings.Repeat("x", 64) + `"}]}`
	for out, want := range map[string]bool{
		`  [{"page_content": "a"}]  `:                  true,
		`[{"page_content": "a"}`:                       false, // cut short
		`{"documents": [{"page_content": "a"}]`:        false,
		`page_content: a`:                              false,
		long:                                           true, // too large to read: passes as too_large
		long[:len(long)-1]:                             true,
		"text mentioning page_content " + long:         false, // not JSON, however long
		`{"documents": [{"text": "no page content"}]}`: false,
	} {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.output", out)
		if _, ok := r.Recognise(s); ok != want {
			t.Errorf("%.50q: recognised %v, want %v", out, ok, want)
		}
	}
}

func TestMentionsDocuments(t *testing.T) {
	for _, s := range []string{"", "_", "page_content", "xpage_contentx", "page_conten", "age_content", "__page_content", "page__content",
		"_page_content_", strings.Repeat("_", 100) + "page_content", strings.Repeat("page_", 30), "page_contenpage_content"} {
		if got, want := mentionsDocuments(s), strings.Contains(s, "page_content"); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// jsonContainer trims as strings.TrimSpace does, whichever end has the
// white space, Unicode spaces included.
func TestJSONContainer(t *testing.T) {
	for _, s := range []string{"", " ", "[]", " [] ", "\t{}\n", "{} ", "\u00a0[1]\u00a0", "[1]\u3000", "x", " x", "\u00a0x", "]", "{", "é[", "[é"} {
		trimmed := strings.TrimSpace(s)
		want := trimmed != "" && (trimmed[0] == '[' || trimmed[0] == '{')
		got, ok := jsonContainer(s)
		if ok != want || (ok && got != trimmed) {
			t.Errorf("%q: %q %v, want %q %v", s, got, ok, trimmed, want)
		}
	}
}
