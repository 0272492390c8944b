package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The fuzz targets build spans from arbitrary input in each dialect and
// check that reading never panics and never exceeds its limits, whatever
// the types, encodings and sizes. Run one with, for example:
//
//	go test -fuzz FuzzProject ./processor/ragprecisionprocessor/internal/spanreader/

var fuzzLimits = Limits{TopK: 0, MaxChunks: 8, MaxBytes: 4096}

// check runs everything a span goes through and verifies the bounds.
func check(t *testing.T, keys Keys, lim Limits, s ptrace.Span) {
	r := New(keys, lim)
	if d, ok := r.Recognise(s); ok {
		ret, err := r.Read(s, d)
		if err == nil {
			if len(ret.Chunks) == 0 || len(ret.Chunks) > lim.MaxChunks || (lim.TopK > 0 && len(ret.Chunks) > lim.TopK) {
				t.Fatalf("%d chunks with limits %+v", len(ret.Chunks), lim)
			}
			total := len(ret.Query) + len(ret.Answer) + len(ret.Reference)
			for _, c := range ret.Chunks {
				total += len(c)
			}
			if total > lim.MaxBytes {
				t.Fatalf("%d bytes read with limit %d", total, lim.MaxBytes)
			}
		}
	}
	if a, ok := r.TraceAnswer(s); ok && len(a.Text) > lim.MaxBytes {
		t.Fatalf("answer of %d bytes", len(a.Text))
	}
}

// putFuzzed stores v under key with a type chosen by kind, so that the
// fuzzer explores wrong types as well as right ones.
func putFuzzed(m pcommon.Map, key string, kind uint8, v string) {
	switch kind % 6 {
	case 0:
		m.PutStr(key, v)
	case 1:
		sl := m.PutEmptySlice(key)
		for i := 0; i < len(v); i += 7 {
			sl.AppendEmpty().SetStr(v[i:min(i+7, len(v))])
		}
	case 2:
		m.PutInt(key, int64(len(v)))
	case 3:
		m.PutEmptyMap(key).PutStr("content", v)
	case 4:
		m.PutEmptyBytes(key).FromRaw([]byte(v))
	case 5:
		sl := m.PutEmptySlice(key)
		sl.AppendEmpty().SetEmptyMap().PutStr("content", v)
		sl.AppendEmpty().SetDouble(1.5)
	}
}

func seeds(f *testing.F) {
	for _, s := range []string{
		`["a","b"]`, `[{"content":"a"},{"text":"b"}]`, `[{"page_content":"x"}]`,
		`{"documents":[{"page_content":"x"}]}`, `{"outputs":[{"kwargs":{"page_content":"y"}}]}`,
		`[`, `[{"content":`, `{"documents": 5}`, "\xff\xfe\xfd", `["\ud800"]`, `null`, ``, `   `,
		`[[[[[[[[[[]]]]]]]]]]`, `{"documents":{"documents":{"documents":[]}}}`,
	} {
		f.Add(s, "query", "reference", uint8(0), uint8(0))
		f.Add(s, "\xff", "", uint8(1), uint8(2))
	}
}

func FuzzProject(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, chunks, query, ref string, kind, topK uint8) {
		s := ptrace.NewSpan()
		putFuzzed(s.Attributes(), "rag.chunks", kind, chunks)
		putFuzzed(s.Attributes(), "rag.query", kind/6, query)
		putFuzzed(s.Attributes(), "rag.reference", kind/36, ref)
		check(t, Keys{}, Limits{TopK: int(topK % 4), MaxChunks: fuzzLimits.MaxChunks, MaxBytes: fuzzLimits.MaxBytes}, s)
	})
}

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

func FuzzOpenLLMetry(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, output, input, doc string, kind, events uint8) {
		s := ptrace.NewSpan()
		putFuzzed(s.Attributes(), "traceloop.entity.output", kind, output)
		putFuzzed(s.Attributes(), "traceloop.entity.input", kind/6, input)
		putFuzzed(s.Attributes(), "db.query.text", kind/36, input)
		for range int(events % 12) {
			e := s.Events().AppendEmpty()
			e.SetName("db.query.result")
			putFuzzed(e.Attributes(), "db.query.result.document", kind, doc)
		}
		check(t, Keys{}, fuzzLimits, s)
	})
}

func FuzzAttributes(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, chunks, answer, key string, kind, topK uint8) {
		s := ptrace.NewSpan()
		keys := Keys{Chunks: "app." + key, Answer: "app.answer", Query: key, Reference: "app.ref"}
		putFuzzed(s.Attributes(), keys.Chunks, kind, chunks)
		putFuzzed(s.Attributes(), keys.Answer, kind/6, answer)
		putFuzzed(s.Attributes(), keys.Query, kind/36, answer)
		check(t, keys, Limits{TopK: int(topK % 4), MaxChunks: 3, MaxBytes: 256}, s)
	})
}
