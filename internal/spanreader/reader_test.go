package spanreader

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var limits = Limits{MaxChunks: 100, MaxBytes: 1 << 20}

func newSpan() ptrace.Span {
	s := ptrace.NewSpan()
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{2})
	s.SetParentSpanID(pcommon.SpanID{3})
	return s
}

func strSlice(m pcommon.Map, key string, vals ...string) {
	sl := m.PutEmptySlice(key)
	for _, v := range vals {
		sl.AppendEmpty().SetStr(v)
	}
}

func read(t *testing.T, r *Reader, s ptrace.Span) (Dialect, Retrieval, error) {
	t.Helper()
	d, ok := r.Recognise(s)
	if !ok {
		t.Fatalf("not recognised: %v", s.Attributes().AsRaw())
	}
	ret, err := r.Read(s, d)
	return d, ret, err
}

func TestRecogniseOrder(t *testing.T) {
	r := New(Keys{Chunks: "app.chunks"}, limits)
	tests := []struct {
		name  string
		build func(pcommon.Map)
		want  Dialect
		ok    bool
	}{
		{"plain", func(m pcommon.Map) { m.PutStr("http.route", "/") }, "", false},
		{"project", func(m pcommon.Map) { strSlice(m, "rag.chunks", "a") }, DialectProject, true},
		{"genai", func(m pcommon.Map) { m.PutStr("gen_ai.operation.name", "retrieval") }, DialectGenAI, true},
		{"genai chat is not retrieval", func(m pcommon.Map) { m.PutStr("gen_ai.operation.name", "chat") }, "", false},
		{"openinference", func(m pcommon.Map) { m.PutStr("openinference.span.kind", "RETRIEVER") }, DialectOpenInference, true},
		{"openinference llm", func(m pcommon.Map) { m.PutStr("openinference.span.kind", "LLM") }, "", false},
		{"openllmetry output", func(m pcommon.Map) {
			m.PutStr("traceloop.entity.output", `{"documents":[{"page_content":"x"}]}`)
		}, DialectOpenLLMetry, true},
		{"openllmetry output without documents", func(m pcommon.Map) { m.PutStr("traceloop.entity.output", `{"answer":"x"}`) }, "", false},
		{"project beats genai", func(m pcommon.Map) {
			m.PutStr("gen_ai.operation.name", "retrieval")
			strSlice(m, "rag.chunks", "a")
		}, DialectProject, true},
		{"genai beats openinference", func(m pcommon.Map) {
			m.PutStr("openinference.span.kind", "RETRIEVER")
			m.PutStr("gen_ai.operation.name", "retrieval")
		}, DialectGenAI, true},
		{"explicit beats all", func(m pcommon.Map) {
			strSlice(m, "rag.chunks", "a")
			strSlice(m, "app.chunks", "b")
		}, DialectAttributes, true},
		{"wrong type for kind", func(m pcommon.Map) { m.PutInt("openinference.span.kind", 1) }, "", false},
	}
	for _, tc := range tests {
		s := newSpan()
		tc.build(s.Attributes())
		d, ok := r.Recognise(s)
		if d != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.name, d, ok, tc.want, tc.ok)
		}
	}
	// Query result events make a retrieval when they hold a document.
	s := newSpan()
	e := s.Events().AppendEmpty()
	e.SetName("db.query.result")
	e.Attributes().PutStr("db.query.result.id", "a")
	if d, ok := r.Recognise(s); ok {
		t.Errorf("db.query.result event without a document: %q", d)
	}
	e.Attributes().PutStr("db.query.result.document", "x")
	if d, ok := r.Recognise(s); d != DialectOpenLLMetry || !ok {
		t.Errorf("db.query.result events: %q %v", d, ok)
	}
}

func TestReadProject(t *testing.T) {
	s := newSpan()
	a := s.Attributes()
	a.PutStr("rag.query", "q")
	a.PutStr("rag.answer", "ans")
	a.PutStr("rag.reference", "ref")
	strSlice(a, "rag.chunks", "c1", "c2")
	_, ret, err := read(t, New(Keys{}, limits), s)
	if err != nil {
		t.Fatal(err)
	}
	want := Retrieval{Query: "q", Answer: "ans", Reference: "ref", Chunks: []string{"c1", "c2"}}
	if !reflect.DeepEqual(ret, want) {
		t.Fatalf("%+v", ret)
	}
}

func TestChunkEncodings(t *testing.T) {
	r := New(Keys{}, limits)
	tests := []struct {
		name string
		set  func(pcommon.Map)
		want []string
		err  error
	}{
		{"json strings", func(m pcommon.Map) { m.PutStr("rag.chunks", `["a", "b"]`) }, []string{"a", "b"}, nil},
		{"json objects", func(m pcommon.Map) {
			m.PutStr("rag.chunks", `[{"content":"a"},{"text":"b"},{"page_content":"c"},{"document":{"content":"d"}}]`)
		}, []string{"a", "b", "c", "d"}, nil},
		{"object without text keeps its rank", func(m pcommon.Map) { m.PutStr("rag.chunks", `[{"id":1},"b"]`) }, []string{"", "b"}, nil},
		{"plain string is one chunk", func(m pcommon.Map) { m.PutStr("rag.chunks", "just text") }, []string{"just text"}, nil},
		{"maps in a slice, a number no text", func(m pcommon.Map) {
			sl := m.PutEmptySlice("rag.chunks")
			sl.AppendEmpty().SetEmptyMap().PutStr("content", "a")
			sl.AppendEmpty().SetInt(7)
			sl.AppendEmpty().SetEmptyBytes()
		}, []string{"a", "", ""}, nil},
		{"empty slice", func(m pcommon.Map) { m.PutEmptySlice("rag.chunks") }, nil, ErrNoChunks},
		{"empty string", func(m pcommon.Map) { m.PutStr("rag.chunks", "  ") }, nil, ErrNoChunks},
		{"malformed json", func(m pcommon.Map) { m.PutStr("rag.chunks", `[{"content": "a"`) }, nil, ErrNoChunks},
		{"json object without documents", func(m pcommon.Map) { m.PutStr("rag.chunks", `{"x": 1}`) }, nil, ErrNoChunks},
		{"int", func(m pcommon.Map) { m.PutInt("rag.chunks", 3) }, nil, ErrNoChunks},
		{"map", func(m pcommon.Map) { m.PutEmptyMap("rag.chunks") }, nil, ErrNoChunks},
		{"bytes", func(m pcommon.Map) { m.PutEmptyBytes("rag.chunks").FromRaw([]byte("abc")) }, nil, ErrNoChunks},
		{"invalid utf-8 passes through", func(m pcommon.Map) { strSlice(m, "rag.chunks", "a\xffb") }, []string{"a\xffb"}, nil},
	}
	for _, tc := range tests {
		s := newSpan()
		tc.set(s.Attributes())
		_, ret, err := read(t, r, s)
		if !errors.Is(err, tc.err) || (tc.err == nil && !reflect.DeepEqual(ret.Chunks, tc.want)) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, ret.Chunks, err, tc.want, tc.err)
		}
	}
}

func TestWrongTypesForText(t *testing.T) {
	s := newSpan()
	a := s.Attributes()
	a.PutInt("rag.query", 5)
	a.PutBool("rag.reference", true)
	a.PutEmptyMap("rag.answer")
	strSlice(a, "rag.chunks", "c")
	_, ret, err := read(t, New(Keys{}, limits), s)
	if err != nil || ret.Query != "" || ret.Reference != "" || ret.Answer != "" {
		t.Fatalf("%+v %v", ret, err)
	}
}

func TestLimits(t *testing.T) {
	many := make([]string, 10_000)
	for i := range many {
		many[i] = "chunk " + strconv.Itoa(i)
	}
	tests := []struct {
		name   string
		limits Limits
		set    func(pcommon.Map)
		chunks int
		err    error
	}{
		{"10,000 chunks", limits, func(m pcommon.Map) { strSlice(m, "rag.chunks", many...) }, 0, ErrTooLarge},
		{"10,000 chunks cut by top_k", Limits{TopK: 5, MaxChunks: 100, MaxBytes: 1 << 20}, func(m pcommon.Map) { strSlice(m, "rag.chunks", many...) }, 5, nil},
		{"10,000 chunks as JSON", limits, func(m pcommon.Map) {
			m.PutStr("rag.chunks", `["`+strings.Join(many, `","`)+`"]`)
		}, 0, ErrTooLarge},
		{"10 MB chunk", limits, func(m pcommon.Map) { strSlice(m, "rag.chunks", strings.Repeat("x", 10<<20)) }, 0, ErrTooLarge},
		{"10 MB JSON is not parsed", limits, func(m pcommon.Map) { m.PutStr("rag.chunks", `["`+strings.Repeat("x", 10<<20)+`"]`) }, 0, ErrTooLarge},
		{"10 MB reference", limits, func(m pcommon.Map) {
			strSlice(m, "rag.chunks", "c")
			m.PutStr("rag.reference", strings.Repeat("x", 10<<20))
		}, 0, ErrTooLarge},
		{"bytes add up over chunks", Limits{MaxChunks: 100, MaxBytes: 10}, func(m pcommon.Map) { strSlice(m, "rag.chunks", "123456", "123456") }, 0, ErrTooLarge},
		{"exactly at the limit", Limits{MaxChunks: 2, MaxBytes: 12}, func(m pcommon.Map) { strSlice(m, "rag.chunks", "123456", "123456") }, 2, nil},
	}
	for _, tc := range tests {
		s := newSpan()
		tc.set(s.Attributes())
		start := time.Now()
		_, ret, err := read(t, New(Keys{}, tc.limits), s)
		if !errors.Is(err, tc.err) || len(ret.Chunks) != tc.chunks {
			t.Errorf("%s: %d chunks, %v; want %d, %v", tc.name, len(ret.Chunks), err, tc.chunks, tc.err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %s", tc.name, d)
		}
	}
}

func TestReadOpenInference(t *testing.T) {
	s := newSpan()
	a := s.Attributes()
	a.PutStr("openinference.span.kind", "RETRIEVER")
	a.PutStr("input.value", "q")
	a.PutStr("retrieval.documents.10.document.content", "ten")
	a.PutStr("retrieval.documents.2.document.content", "two")
	a.PutStr("retrieval.documents.0.document.content", "zero")
	a.PutStr("retrieval.documents.2.document.id", "id-2")
	a.PutStr("retrieval.documents.x.document.content", "not an index")
	a.PutStr("retrieval.documents.01.document.content", "not canonical")
	a.PutStr("retrieval.documents.-1.document.content", "negative")
	_, ret, err := read(t, New(Keys{}, Limits{TopK: 0, MaxChunks: 10, MaxBytes: 1000}), s)
	if err != nil || ret.Query != "q" || !reflect.DeepEqual(ret.Chunks, []string{"zero", "two", "ten"}) {
		t.Fatalf("%+v %v", ret, err)
	}
	_, ret, _ = read(t, New(Keys{}, Limits{TopK: 2, MaxChunks: 10, MaxBytes: 1000}), s)
	if !reflect.DeepEqual(ret.Chunks, []string{"zero", "two"}) {
		t.Fatalf("top_k: %q", ret.Chunks)
	}
	empty := newSpan()
	empty.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	if _, _, err := read(t, New(Keys{}, limits), empty); !errors.Is(err, ErrNoChunks) {
		t.Fatalf("no documents: %v", err)
	}
}

func TestReadOpenLLMetry(t *testing.T) {
	s := newSpan()
	s.Attributes().PutStr("db.query.text", "q from db")
	for i, doc := range []string{"first", "second"} {
		e := s.Events().AppendEmpty()
		e.SetName("db.query.result")
		e.Attributes().PutStr("db.query.result.document", doc)
		e.Attributes().PutInt("db.query.result.id", int64(i))
		s.Events().AppendEmpty().SetName("other")
	}
	_, ret, err := read(t, New(Keys{}, limits), s)
	if err != nil || ret.Query != "q from db" || !reflect.DeepEqual(ret.Chunks, []string{"first", "second"}) {
		t.Fatalf("%+v %v", ret, err)
	}

	queries := map[string]string{
		`{"query": "top"}`:                          "top",
		`{"inputs": {"question": "nested"}}`:        "nested",
		`{"kwargs": {"input": "kw"}}`:               "kw",
		`"a json string"`:                           "a json string",
		`{"inputs": {"inputs": {"query": "deep"}}}`: "deep",
		`not json`:     "fallback",
		`{"query": 5}`: "fallback",
	}
	for in, want := range queries {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.input", in)
		s.Attributes().PutStr("db.query.text", "fallback")
		s.Attributes().PutStr("traceloop.entity.output", `[{"page_content": "c"}]`)
		_, ret, err := read(t, New(Keys{}, limits), s)
		if err != nil || ret.Query != want {
			t.Errorf("input %s: query %q (%v), want %q", in, ret.Query, err, want)
		}
	}
}

func TestExplicitKeysOverride(t *testing.T) {
	s := newSpan()
	a := s.Attributes()
	strSlice(a, "rag.chunks", "c")
	a.PutStr("rag.query", "dialect query")
	a.PutStr("rag.reference", "dialect reference")
	a.PutStr("my.q", "mine")
	a.PutStr("my.ref", "my reference")
	a.PutStr("my.answer", "my answer")
	r := New(Keys{Query: "my.q", Reference: "my.ref", Answer: "my.answer", Chunks: "my.chunks"}, limits)
	_, ret, err := read(t, r, s)
	if err != nil || ret.Query != "mine" || ret.Reference != "my reference" || ret.Answer != "my answer" {
		t.Fatalf("%+v %v", ret, err)
	}
}

func TestTraceAnswer(t *testing.T) {
	r := New(Keys{Answer: "app.answer"}, Limits{MaxChunks: 10, MaxBytes: 256})
	tests := []struct {
		name string
		root bool
		set  func(pcommon.Map)
		want string
		ok   bool
	}{
		{"root output.value", true, func(m pcommon.Map) { m.PutStr("output.value", "A") }, "A", true},
		{"configured key first", true, func(m pcommon.Map) { m.PutStr("output.value", "A"); m.PutStr("app.answer", "B") }, "B", true},
		{"genai messages", true, func(m pcommon.Map) {
			m.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Hi"},{"type":"tool_call","content":"x"},{"type":"text","content":"there"}]}]`)
		}, "Hi\nthere", true},
		{"traceloop json string", true, func(m pcommon.Map) { m.PutStr("traceloop.entity.output", `"done"`) }, "done", true},
		{"traceloop object", true, func(m pcommon.Map) { m.PutStr("traceloop.entity.output", `{"outputs": {"answer": "42"}}`) }, "42", true},
		{"traceloop raw text", true, func(m pcommon.Map) { m.PutStr("traceloop.entity.output", `plain`) }, "plain", true},
		{"llm span", false, func(m pcommon.Map) { m.PutStr("openinference.span.kind", "LLM"); m.PutStr("output.value", "L") }, "L", true},
		{"genai chat span", false, func(m pcommon.Map) {
			m.PutStr("gen_ai.operation.name", "chat")
			m.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"C"}]}]`)
		}, "C", true},
		{"openllmetry llm span", false, func(m pcommon.Map) { m.PutStr("llm.request.type", "chat"); m.PutStr("traceloop.entity.output", `"T"`) }, "T", true},
		{"child non-llm span", false, func(m pcommon.Map) { m.PutStr("output.value", "A") }, "", false},
		{"root without answer", true, func(m pcommon.Map) { m.PutStr("http.route", "/") }, "", false},
		{"malformed messages", true, func(m pcommon.Map) { m.PutStr("gen_ai.output.messages", `[{"parts": [`) }, "", false},
		{"answer over the limit is cut", true, func(m pcommon.Map) { m.PutStr("output.value", strings.Repeat("é", 200)) }, strings.Repeat("é", 128), true},
	}
	for _, tc := range tests {
		s := newSpan()
		if tc.root {
			s.SetParentSpanID(pcommon.SpanID{})
		}
		tc.set(s.Attributes())
		a, ok := r.TraceAnswer(s)
		if ok != tc.ok || a.Text != tc.want || (ok && a.Root != tc.root) {
			t.Errorf("%s: %+v %v, want %q %v", tc.name, a, ok, tc.want, tc.ok)
		}
	}
}

func BenchmarkRecognise(b *testing.B) {
	r := New(Keys{}, limits)
	s := newSpan()
	a := s.Attributes()
	for i := range 10 {
		a.PutStr("attr."+strconv.Itoa(i), "value")
	}
	for b.Loop() {
		r.Recognise(s)
	}
}

// Only outputs Read can take documents from make an OpenLLMetry span a
// retrieval span: a chain's answer that quotes its source documents is not.
func TestOpenLLMetryRecognitionIsExact(t *testing.T) {
	r := New(Keys{}, limits)
	for out, want := range map[string]bool{
		`{"documents": [{"page_content": "a"}]}`:                       true,
		`[{"page_content": "a"}]`:                                      true,
		`{"outputs": [{"kwargs": {"page_content": "a"}}]}`:             true,
		`{"result": "x", "source_documents": [{"page_content": "a"}]}`: false,
		`{"answer": "page_content is a LangChain field"}`:              false,
		`"page_content"`: false,
		`{"documents": [{"metadata": {"note": "no page_content here"}}]}`: false,
	} {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.output", out)
		if _, ok := r.Recognise(s); ok != want {
			t.Errorf("%s: recognised %v, want %v", out, ok, want)
		}
	}
}

// GenAI makes document content opt-in: documents without text are not
// chunks to judge.
func TestDocumentsWithoutTextAreNoChunks(t *testing.T) {
	s := newSpan()
	s.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	s.Attributes().PutStr("gen_ai.retrieval.documents", `[{"id": "a", "score": 0.9}, {"id": "b", "score": 0.5}]`)
	if _, _, err := read(t, New(Keys{}, limits), s); !errors.Is(err, ErrNoChunks) {
		t.Fatalf("err %v, want ErrNoChunks", err)
	}
}

// The configured chunks attribute replaces the chunks only: the dialect's
// query and reference still count.
func TestExplicitChunksKeepDialectFields(t *testing.T) {
	s := newSpan()
	s.Attributes().PutStr("rag.reference", "ref")
	s.Attributes().PutStr("rag.query", "q")
	strSlice(s.Attributes(), "my.chunks", "c1")
	d, ret, err := read(t, New(Keys{Chunks: "my.chunks"}, limits), s)
	if err != nil || d != DialectAttributes || ret.Reference != "ref" || ret.Query != "q" || !reflect.DeepEqual(ret.Chunks, []string{"c1"}) {
		t.Fatalf("%q %+v %v", d, ret, err)
	}
	// With rag.chunks present too, the configured attribute wins.
	strSlice(s.Attributes(), "rag.chunks", "other")
	if _, ret, _ := read(t, New(Keys{Chunks: "my.chunks"}, limits), s); !reflect.DeepEqual(ret.Chunks, []string{"c1"}) {
		t.Fatalf("chunks %q", ret.Chunks)
	}
}

func TestAlreadyScoredIsNotRecognised(t *testing.T) {
	s := newSpan()
	strSlice(s.Attributes(), "rag.chunks", "a")
	s.Attributes().PutStr("rag.contextual_precision.status", "budget")
	if _, ok := New(Keys{}, limits).Recognise(s); ok {
		t.Fatal("a span with a status from upstream was recognised")
	}
}
