package spanreader

import (
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Reading JSON must cost time and memory linear in its size, whatever its
// shape: a 136 KiB traceloop.entity.output of documents nested 10,000 deep
// once took 11 s of CPU and 1.1 GB on the path every span takes. These tests
// measure cost without a clock: the bytes the scanner moves over (scanCost)
// and the bytes allocated (runtime.MemStats), and hold both to a small
// multiple of the JSON the span carries.

const (
	// scanBound: what a span goes through reads its JSON at most six
	// times: Recognise finds the documents and reads the first text (2),
	// Read finds them, counts them and reads their text (3), TraceAnswer
	// looks for an answer (1).
	scanBound = 6
	// allocBound: decoding a string whose every byte is invalid UTF-8
	// triples it, and encoding/json copies it first.
	allocBound = 8
	// allocSlack covers what does not grow with the input: the Retrieval,
	// slices of MaxChunks strings, the runtime's own.
	allocSlack = 64 << 10
)

// cost is what one run of everything a span goes through cost.
type cost struct {
	scanned   int
	allocated uint64
}

// measure runs f with the scanner's work counted and the allocations of
// the process measured around it.
func measure(f func()) cost {
	var c cost
	scanCost = func(n int) { c.scanned += n }
	defer func() { scanCost = nil }()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	c.allocated = after.TotalAlloc - before.TotalAlloc
	return c
}

// spansWith are the spans that carry text in each attribute the readers
// parse, on a root span (for TraceAnswer) or not, in each dialect.
func spansWith(text string) []ptrace.Span {
	var spans []ptrace.Span
	add := func(set func(pcommon.Map)) {
		for _, root := range []bool{true, false} {
			s := newSpan()
			if root {
				s.SetParentSpanID(pcommon.SpanID{})
			}
			set(s.Attributes())
			spans = append(spans, s)
		}
	}
	add(func(m pcommon.Map) { m.PutStr("traceloop.entity.output", text) })
	add(func(m pcommon.Map) {
		m.PutStr("traceloop.entity.output", text)
		m.PutStr("traceloop.entity.input", text)
		m.PutEmptySlice("rag.dummy")
	})
	add(func(m pcommon.Map) {
		m.PutStr("traceloop.entity.input", text)
		m.PutStr("db.query.text", "q")
		m.PutStr("traceloop.entity.output", `[{"page_content": "c"}]`)
	})
	add(func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "retrieval")
		m.PutStr("gen_ai.retrieval.documents", text)
	})
	add(func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutStr("gen_ai.output.messages", text)
	})
	add(func(m pcommon.Map) { m.PutStr("rag.chunks", text) })
	add(func(m pcommon.Map) { m.PutStr("app.chunks", text) })
	add(func(m pcommon.Map) {
		m.PutStr("llm.request.type", "chat")
		m.PutStr("traceloop.entity.output", text)
	})
	return spans
}

// runAll is everything the processor does with a span.
func runAll(r *Reader, s ptrace.Span) {
	if d, ok := r.Recognise(s); ok {
		_, _ = r.Read(s, d)
	}
	_, _ = r.TraceAnswer(s)
}

// checkCost runs every span carrying text through the reader and fails if
// the work or the memory is not linear in the text.
func checkCost(t *testing.T, r *Reader, text string) {
	t.Helper()
	for _, s := range spansWith(text) {
		c := measure(func() { runAll(r, s) })
		n := textBytes(s) // text, up to twice, and what goes with it
		if c.scanned > scanBound*n+64 {
			t.Fatalf("%d bytes of JSON (%.40q…): scanned %d bytes (attributes %v)", len(text), text, c.scanned, keys(s))
		}
		if c.allocated > uint64(allocBound*n+allocSlack) {
			t.Fatalf("%d bytes of JSON (%.40q…): allocated %d bytes (attributes %v)", len(text), text, c.allocated, keys(s))
		}
	}
}

func keys(s ptrace.Span) []string {
	var ks []string
	for k := range s.Attributes().All() {
		ks = append(ks, k)
	}
	return ks
}

// craftedJSON are the shapes that made the old readers quadratic, or that
// could make a scanner so: deep, wide and long.
func craftedJSON() map[string]string {
	rep := strings.Repeat
	doc := `{"page_content": "paris"}`
	manyDocs := "[" + rep(doc+",", 100_000) + doc + "]"
	return map[string]string{
		// The production case: documents nested 10,000 deep (136 KiB).
		"documents nested 10,000 deep":        rep(`{"documents":`, 10_000) + "[" + doc + "]" + rep("}", 10_000),
		"documents nested to the cap":         rep(`{"documents":`, maxNesting-2) + "[" + doc + "]" + rep("}", maxNesting-2),
		"documents nested past the cap":       rep(`{"documents":`, maxNesting+1) + "[" + doc + "]" + rep("}", maxNesting+1),
		"outputs nested, wide at every level": rep(`{"a": [1, 2, 3], "b": {"c": "d"}, "outputs":`, 60) + manyDocs[:1<<16] + "]" + rep("}", 60),
		"arrays nested 100,000 deep":          rep("[", 100_000) + rep("]", 100_000),
		"objects nested 100,000 deep":         rep(`{"kwargs":`, 100_000) + `"x"` + rep("}", 100_000),
		"query objects nested deep":           rep(`{"inputs":`, 50) + `{"query": "q"}` + rep("}", 50),
		"100,000 documents":                   manyDocs,
		"100,000 documents wrapped":           `{"documents": ` + manyDocs + `}`,
		"100,000 strings":                     "[" + rep(`"chunk",`, 100_000) + `"chunk"]`,
		"100,000 empty objects":               "[" + rep(`{},`, 100_000) + `{}]`,
		"100,000 documents keys":              "{" + rep(`"documents": {"x": 1}, `, 100_000) + `"documents": [` + doc + `]}`,
		"100,000 keys":                        "{" + rep(`"k": 1, `, 100_000) + `"outputs": [` + doc + `]}`,
		"1 MiB string":                        `[{"page_content": "` + rep("paris ", 1<<20/6) + `"}]`,
		"1 MiB of escapes":                    `[{"page_content": "` + rep(`\"\\\u00e9\ud800`, 1<<20/20) + `"}]`,
		"1 MiB of invalid UTF-8":              `[{"page_content": "` + rep("\xff", 1<<20) + `"}]`,
		"1 MiB key":                           `{"` + rep("k", 1<<20) + `": 1, "documents": [` + doc + `]}`,
		"100,000 messages":                    "[" + rep(`{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]},`, 100_000) + `{"content": "x"}]`,
		"message parts repeated":              `[{` + rep(`"parts": [{"type": "text", "content": "a"}], `, 50_000) + `"content": "x"}]`,
		"unterminated":                        `{"documents": [` + rep(doc+",", 50_000),
		"numbers":                             "[" + rep("-1.5e+10,", 100_000) + "0]",
	}
}

func TestJSONCostIsLinear(t *testing.T) {
	r := New(Keys{Chunks: "app.chunks"}, Limits{MaxChunks: 1 << 20, MaxBytes: 64 << 20})
	for name, text := range craftedJSON() {
		t.Run(name, func(t *testing.T) { checkCost(t, r, text) })
	}
}

// The cost is measured, not assumed: the old finder on the production case
// is far outside the bounds (a smaller depth keeps the test quick).
func TestLegacyCostIsCaught(t *testing.T) {
	text := strings.Repeat(`{"documents":`, 1000) + `[{"page_content": "paris"}]` + strings.Repeat("}", 1000)
	c := measure(func() { legacyHoldsDocuments(text, 1<<20) })
	if c.allocated <= uint64(allocBound*2*len(text)+allocSlack) {
		t.Fatalf("legacy allocated %d bytes for %d: the bound would not catch it", c.allocated, len(text))
	}
	c = measure(func() { New(Keys{}, Limits{MaxChunks: 10, MaxBytes: 1 << 20}).holdsDocuments(text) })
	if c.scanned > len(text) || c.allocated > allocSlack {
		t.Fatalf("scanner: %+v for %d bytes", c, len(text))
	}
}

// Recognise allocates nothing, on plain spans, model calls and retrievals
// in every dialect.
func TestRecogniseDoesNotAllocate(t *testing.T) {
	r := New(Keys{Answer: "app.answer"}, Limits{MaxChunks: 100, MaxBytes: 1 << 20})
	spans := []ptrace.Span{}
	for _, c := range passThroughCases {
		spans = append(spans, c.span())
	}
	for _, span := range candidateCases() {
		spans = append(spans, span())
	}
	for i, s := range spans {
		if allocs := testing.AllocsPerRun(100, func() { r.Recognise(s) }); allocs != 0 {
			t.Errorf("span %d (%v): %v allocations", i, keys(s), allocs)
		}
	}
}

// FuzzJSONCost builds JSON of any shape, repeated (prefix n times, middle,
// suffix n times, so that deep and wide texts are a few mutations away),
// and holds every reader to the cost bounds on it.
func FuzzJSONCost(f *testing.F) {
	f.Add(`{"documents":`, `[{"page_content":"paris"}]`, `}`, uint16(10_000))
	f.Add(`[`, `{"page_content":"x"}`, `]`, uint16(5000))
	f.Add(`{"outputs": {"a": [1,2], "documents":`, `[]`, `}}`, uint16(100))
	f.Add(`[{"page_content": "`, `x`, `"},`, uint16(20_000))
	f.Add(`{"inputs":`, `{"query": "q"}`, `}`, uint16(40))
	f.Add(`[{"parts": [{"type": "text", "content": "`, `x`, `"}]},`, uint16(9000))
	f.Add(`"\u00e9`, `\ud800`, `"`, uint16(3000))
	r := New(Keys{Chunks: "app.chunks"}, Limits{MaxChunks: 1 << 16, MaxBytes: 8 << 20})
	f.Fuzz(func(t *testing.T, prefix, middle, suffix string, n uint16) {
		if len(prefix)+len(suffix) > 0 && int(n)*(len(prefix)+len(suffix)) > 1<<20 {
			n = uint16((1 << 20) / (len(prefix) + len(suffix)))
		}
		text := strings.Repeat(prefix, int(n)) + middle + strings.Repeat(suffix, int(n))
		checkCost(t, r, text)
	})
}

func TestCraftedJSONIsReadRight(t *testing.T) {
	r := New(Keys{}, Limits{MaxChunks: 1 << 20, MaxBytes: 64 << 20})
	crafted := craftedJSON()
	for name, want := range map[string]int{
		"documents nested to the cap":   1,
		"documents nested 10,000 deep":  0, // deeper than maxNesting: not read
		"documents nested past the cap": 0,
		"100,000 documents":             100_001,
		"100,000 documents wrapped":     100_001,
		"100,000 strings":               0, // no page_content: not OpenLLMetry documents
		"100,000 documents keys":        1,
		"100,000 keys":                  1,
		"1 MiB string":                  1,
		"1 MiB of escapes":              1,
		"1 MiB of invalid UTF-8":        1,
		"1 MiB key":                     1,
		"unterminated":                  0,
	} {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.output", crafted[name])
		d, ok := r.Recognise(s)
		if ok != (want > 0) {
			t.Errorf("%s: recognised %v", name, ok)
			continue
		}
		if !ok {
			continue
		}
		ret, err := r.Read(s, d)
		if len(ret.Chunks) != want {
			t.Errorf("%s: %d chunks (%v), want %d", name, len(ret.Chunks), err, want)
		}
	}
	text := crafted["1 MiB of invalid UTF-8"]
	if got, want := textOf(findText(text[1:len(text)-1], documentFields)), strings.Repeat("\uFFFD", 1<<20); got != want {
		t.Errorf("invalid UTF-8 decodes to %d bytes, want %d", len(got), len(want))
	}
}
