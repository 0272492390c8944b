package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The fuzz targets build spans from arbitrary input, one per dialect (in
// the dialect's _test file) and one for the configured attributes, and
// check that reading never panics, never exceeds its limits and parses no
// more than a few times the text the span carries, whatever the types,
// encodings and sizes. Run one with, for example:
//
//	go test -fuzz FuzzProject ./internal/spanreader/

var fuzzLimits = Limits{TopK: 0, MaxChunks: 8, MaxBytes: 4096}

// check runs everything a span goes through and verifies the bounds, on
// what it reads and on what reading cost.
func check(t *testing.T, keys Keys, lim Limits, s ptrace.Span) {
	r := New(keys, lim)
	text := textBytes(s)
	if c := measure(func() { runAll(r, s) }); c.scanned > scanBound*text+64 || c.allocated > uint64(allocBound*text+allocSlack) {
		t.Fatalf("cost %+v for a span carrying %d bytes of text", c, text)
	}
	if d, ok := r.Recognise(s); ok {
		ret, err := r.Read(s, d)
		if err != nil && ret.RerankInput != nil {
			t.Fatalf("an input ranking with %v", err)
		}
		if err == nil {
			if len(ret.Chunks) == 0 || len(ret.Chunks) > lim.MaxChunks || (lim.TopK > 0 && len(ret.Chunks) > lim.TopK) {
				t.Fatalf("%d chunks with limits %+v", len(ret.Chunks), lim)
			}
			if ret.RerankInput != nil && len(ret.RerankInput) != len(ret.Chunks) {
				t.Fatalf("an input ranking of %d documents beside %d chunks", len(ret.RerankInput), len(ret.Chunks))
			}
			total := len(ret.Query) + len(ret.Answer) + len(ret.Reference)
			for _, c := range ret.Chunks {
				total += len(c)
			}
			for _, c := range ret.RerankInput {
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

// textBytes is the size of the text a span carries, in its attributes and
// its events' attributes.
func textBytes(s ptrace.Span) int {
	n := mapBytes(s.Attributes())
	for i := 0; i < s.Events().Len(); i++ {
		n += mapBytes(s.Events().At(i).Attributes())
	}
	return n
}

func mapBytes(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += len(k) + valueBytes(v)
	}
	return n
}

func valueBytes(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return len(v.Str())
	case pcommon.ValueTypeBytes:
		return v.Bytes().Len()
	case pcommon.ValueTypeMap:
		return mapBytes(v.Map())
	case pcommon.ValueTypeSlice:
		n := 0
		for i := 0; i < v.Slice().Len(); i++ {
			n += valueBytes(v.Slice().At(i))
		}
		return n
	}
	return 8
}
