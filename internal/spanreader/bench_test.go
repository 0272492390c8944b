package spanreader

import (
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/passbench"
)

// The pass-through benchmarks measure what Recognise costs on spans that
// are not retrievals, next to baselines measured in the same loop, on the
// same spans, interleaved batch by batch so that other processes on the
// machine disturb all of them alike (passbench): a call that does nothing,
// and walks over each span's attribute keys (keys), keys and value types
// (walk), and keys, value types and the bytes of string values (read).
// Each is timed by its fastest batch, and reported per span and as
// multiples of the baselines (recognise-x-walk and so on). Run:
//
//	go test -run XXX -bench 'PassThrough|Candidate' ./internal/spanreader/

const spansPerBatch = 100

// plainSpan has the attributes of an HTTP server span: ten, of mixed types.
func plainSpan() ptrace.Span {
	s := newSpan()
	a := s.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("url.path", "/items")
	a.PutStr("server.address", "shop.internal")
	a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64)")
	a.PutStr("network.protocol.version", "1.1")
	a.PutDouble("app.cart.total", 42.5)
	a.PutStr("service.component", "cart")
	a.PutBool("app.cache.hit", false)
	a.PutStr("cloud.region", "eu-west-1")
	return s
}

// prose is about 2 KB of an assistant's answer.
var prose = strings.Repeat("The capital of France is Paris, which sits on the Seine and is known for its art, food and history. ", 20)

// langChainMessage is how LangChain serialises a chat model's reply: prose
// wrapped in metadata whose keys are full of underscores.
var langChainMessage = `{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {"content": "` +
	prose[:1200] + `", "additional_kwargs": {"refusal": null}, "response_metadata": {"token_usage": {"completion_tokens": 212, "prompt_tokens": 1840, ` +
	`"total_tokens": 2052, "completion_tokens_details": {"reasoning_tokens": 0}, "prompt_tokens_details": {"cached_tokens": 0}}, "model_name": "gpt-4o-mini-2024-07-18", ` +
	`"system_fingerprint": "fp_0ba0d124f1", "finish_reason": "stop", "logprobs": null}, "type": "ai", "id": "run-0c1f7d2e-5b1a-4f0e-9d55-3c7e1f2a9b10-0", ` +
	`"usage_metadata": {"input_tokens": 1840, "output_tokens": 212, "total_tokens": 2052}, "tool_calls": [], "invalid_tool_calls": []}}`

// passThroughCases are spans that are not retrievals. Model calls carry
// their answer in traceloop.entity.output; the task spans are LangChain
// chain steps as OpenLLMetry records them, which Recognise has to look at.
var passThroughCases = []struct {
	name string
	span func() ptrace.Span
}{
	{"plain", plainSpan},
	{"llm/short json", withOutput(true, `[{"role": "assistant", "content": "Paris."}]`)},
	{"llm/2KB json", withOutput(true, `[{"role": "assistant", "content": "`+prose+`"}]`)},
	{"llm/2KB text", withOutput(true, prose)},
	{"task/2KB text", withOutput(false, prose)},
	{"task/short json", withOutput(false, `{"outputs": {"answer": "Paris."}, "kwargs": {"tags": []}}`)},
	{"task/2KB json", withOutput(false, `{"outputs": {"answer": "`+prose+`"}, "kwargs": {"tags": ["seq:step:3"]}}`)},
	{"task/2KB langchain json", withOutput(false, `{"outputs": `+langChainMessage+`, "kwargs": {"tags": ["seq:step:3"], "run_id": null}}`)},
}

func withOutput(llm bool, out string) func() ptrace.Span {
	return func() ptrace.Span {
		s := plainSpan()
		if llm {
			s.Attributes().PutStr("llm.request.type", "chat")
		} else {
			s.Attributes().PutStr("traceloop.span.kind", "task")
		}
		s.Attributes().PutStr("traceloop.entity.output", out)
		return s
	}
}

func batchOf(span func() ptrace.Span) []ptrace.Span {
	spans := make([]ptrace.Span, spansPerBatch)
	for i := range spans {
		spans[i] = span()
	}
	return spans
}

// recognise is Recognise as a batch function of passbench.
func recognise(r *Reader) func(ptrace.Span) int {
	return func(s ptrace.Span) int {
		if _, ok := r.Recognise(s); ok {
			return 1
		}
		return 0
	}
}

func BenchmarkPassThrough(b *testing.B) {
	r := New(Keys{}, Limits{MaxChunks: 100, MaxBytes: 1 << 20})
	for _, c := range passThroughCases {
		spans := batchOf(c.span)
		if _, ok := r.Recognise(spans[0]); ok {
			b.Fatalf("%s: recognised", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			passbench.Interleaved(b, len(spans), []string{"noop", "keys", "walk", "read", "recognise"},
				passbench.ForSpans(spans, passbench.Noop), passbench.ForSpans(spans, passbench.Keys),
				passbench.ForSpans(spans, passbench.Walk), passbench.ForSpans(spans, passbench.Read),
				passbench.ForSpans(spans, recognise(r)))
		})
	}
}

// candidateCases are retrieval spans in each dialect, with 10 chunks of
// 1 KB, as the instrumentation libraries write them.
func candidateCases() map[string]func() ptrace.Span {
	chunk := func(i int) string { return strconv.Itoa(i) + strings.Repeat(" paris is the capital of france.", 32) }
	docsJSON := func(field string) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`{"` + field + `": "` + chunk(i) + `", "metadata": {"source": "wiki/paris.md"}}`)
		}
		b.WriteString("]")
		return b.String()
	}
	return map[string]func() ptrace.Span{
		"project": func() ptrace.Span {
			s := plainSpan()
			a := s.Attributes()
			a.PutStr("rag.query", "What is the capital of France?")
			a.PutStr("rag.answer", "Paris.")
			sl := a.PutEmptySlice("rag.chunks")
			for i := range 10 {
				sl.AppendEmpty().SetStr(chunk(i))
			}
			return s
		},
		"gen_ai": func() ptrace.Span {
			s := plainSpan()
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "retrieval")
			a.PutStr("gen_ai.retrieval.query.text", "What is the capital of France?")
			a.PutStr("gen_ai.retrieval.documents", docsJSON("content"))
			return s
		},
		"openinference": func() ptrace.Span {
			s := plainSpan()
			a := s.Attributes()
			a.PutStr("openinference.span.kind", "RETRIEVER")
			a.PutStr("input.value", "What is the capital of France?")
			for i := range 10 {
				a.PutStr("retrieval.documents."+strconv.Itoa(i)+".document.content", chunk(i))
				a.PutStr("retrieval.documents."+strconv.Itoa(i)+".document.id", strconv.Itoa(i))
			}
			return s
		},
		"openllmetry/output": func() ptrace.Span {
			s := plainSpan()
			a := s.Attributes()
			a.PutStr("traceloop.span.kind", "task")
			a.PutStr("traceloop.entity.input", `{"inputs": {"query": "What is the capital of France?"}, "tags": [], "metadata": {}, "kwargs": {}}`)
			a.PutStr("traceloop.entity.output", `{"documents": `+docsJSON("page_content")+`}`)
			return s
		},
		"openllmetry/events": func() ptrace.Span {
			s := plainSpan()
			s.Attributes().PutStr("db.query.text", "What is the capital of France?")
			for i := range 10 {
				e := s.Events().AppendEmpty()
				e.SetName("db.query.result")
				e.Attributes().PutStr("db.query.result.document", chunk(i))
				e.Attributes().PutStr("db.query.result.id", strconv.Itoa(i))
			}
			return s
		},
	}
}

// BenchmarkCandidate is what a retrieval span costs the reader: recognise
// (every span) and recognise then read (the spans selected), next to the
// walk.
func BenchmarkCandidate(b *testing.B) {
	r := New(Keys{}, Limits{MaxChunks: 100, MaxBytes: 1 << 20})
	for name, span := range candidateCases() {
		spans := batchOf(span)
		d, ok := r.Recognise(spans[0])
		if !ok || d != Dialect(strings.Split(name, "/")[0]) {
			b.Fatalf("%s: recognised as %q %v", name, d, ok)
		}
		if ret, err := r.Read(spans[0], d); err != nil || len(ret.Chunks) != 10 {
			b.Fatalf("%s: %d chunks, %v", name, len(ret.Chunks), err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			passbench.Interleaved(b, len(spans), []string{"walk", "recognise", "recognise+read"},
				passbench.ForSpans(spans, passbench.Walk),
				passbench.ForSpans(spans, recognise(r)),
				passbench.ForSpans(spans, func(s ptrace.Span) int {
					d, _ := r.Recognise(s)
					ret, _ := r.Read(s, d)
					return len(ret.Chunks)
				}))
		})
	}
}

// nestedJSONCases are crafted traceloop.entity.output values: the one that
// took seconds in production, and 1 MiB ones, deep and wide.
func nestedJSONCases() []struct{ name, text string } {
	rep := strings.Repeat
	doc := `{"page_content": "paris"}`
	pad := rep("paris is the capital of france. ", (1<<20)/32)
	wide := `{"documents": [` + rep(`{"page_content": "paris is the capital of france", "metadata": {"source": "wiki"}},`, (1<<20)/85) + doc + `]}`
	return []struct{ name, text string }{
		// encoding/json allows 10,000 levels; the old finder re-parsed
		// the rest of the text at each.
		{"documents nested 9,990 deep (136 KiB)", rep(`{"documents":`, 9990) + "[" + doc + "]" + rep("}", 9990)},
		{"documents nested 1,000 deep around 1 MiB", rep(`{"documents":`, 1000) + `[{"page_content": "` + pad + `"}]` + rep("}", 1000)},
		{"documents nested 60 deep around 1 MiB", rep(`{"documents":`, 60) + `[{"page_content": "` + pad + `"}]` + rep("}", 60)},
		{"12,000 documents (1 MiB)", wide},
	}
}

// BenchmarkNestedJSON is Recognise on a span carrying a crafted output, as
// every span goes through whatever the sampling rate, against the finder
// it replaced (legacy). The legacy runs take seconds each: skip them with
// -bench 'NestedJSON/.*/new'.
func BenchmarkNestedJSON(b *testing.B) {
	lim := Limits{MaxChunks: 1 << 20, MaxBytes: 2 << 20}
	r := New(Keys{}, lim)
	for _, c := range nestedJSONCases() {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.output", c.text)
		b.Run(c.name+"/new", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				r.Recognise(s)
			}
		})
		b.Run(c.name+"/legacy", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				legacyHoldsDocuments(c.text, lim.MaxBytes)
			}
		})
	}
}
