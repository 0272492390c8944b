package loadgen

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor"
)

func TestParseMix(t *testing.T) {
	m, err := ParseMix("project=2, gen_ai=1,openinference")
	if err != nil {
		t.Fatal(err)
	}
	if m[DialectProject] != 2 || m[DialectGenAI] != 1 || m[DialectOpenInference] != 1 || m[DialectOpenLLMetry] != 0 {
		t.Fatalf("%v", m)
	}
	if m.String() != "project=2,gen_ai=1,openinference=1" || m.Only(DialectProject) {
		t.Fatalf("%s", m)
	}
	for _, bad := range []string{"", "langchain=1", "project=-1", "project=x", "project=0"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAssignKeepsTheProportions(t *testing.T) {
	got := Mix{DialectProject: 2, DialectGenAI: 1, DialectOpenLLMetry: 1}.assign(51)
	count := map[Dialect]int{}
	for _, d := range got {
		count[d]++
	}
	// 25.5, 12.75, 12.75: the largest remainders get the last span.
	if len(got) != 51 || count[DialectProject] < 25 || count[DialectGenAI] < 12 || count[DialectOpenLLMetry] < 12 || count[DialectOpenInference] != 0 {
		t.Fatalf("%v", count)
	}
	// Spread, not grouped: the first four cover the three dialects.
	if got[0] == got[1] && got[1] == got[2] {
		t.Fatalf("grouped: %v", got[:4])
	}
}

func allDialects() Traffic {
	t := DefaultTraffic()
	t.Dialects = Mix{DialectProject: 1, DialectGenAI: 1, DialectOpenInference: 1, DialectOpenLLMetry: 1}
	return t
}

// Every span of every batch is a trace of its own, with the low 56 bits of
// its ID (what sampling decides on) random; every retrieval is distinct.
func TestBatchesAreDistinct(t *testing.T) {
	tr := allDialects()
	seenTraces := map[pcommon.TraceID]bool{}
	seenChunks := map[string]bool{}
	var lowBits []uint64
	for sender := range 2 {
		b := newBatch(tr, sender, 1)
		for range 3 {
			b.fill(time.Now())
			if n := b.td.SpanCount(); n != tr.BatchSize {
				t.Fatalf("%d spans", n)
			}
			spans := b.spans
			for i := 0; i < spans.Len(); i++ {
				id := spans.At(i).TraceID()
				if seenTraces[id] {
					t.Fatalf("trace ID %v repeats", id)
				}
				seenTraces[id] = true
				lowBits = append(lowBits, binary.BigEndian.Uint64(id[8:])&(1<<56-1))
			}
			for _, rs := range b.retrievals {
				for _, c := range chunksOf(t, rs) {
					if len(c) != tr.ChunkBytes {
						t.Fatalf("chunk of %d bytes: %q", len(c), c)
					}
					if seenChunks[c] {
						t.Fatalf("chunk repeats: %q", c)
					}
					seenChunks[c] = true
				}
			}
		}
	}
	if want := 2 * 3 * tr.RetrievalsPerBatch() * tr.Chunks; len(seenChunks) != want {
		t.Fatalf("%d chunks, want %d", len(seenChunks), want)
	}
	// Sampling at 1% keeps IDs below 2^56/100: about 1% of them.
	below := 0
	for _, v := range lowBits {
		if v < (1<<56)/100 {
			below++
		}
	}
	if below < 5 || below > 60 { // 3072 IDs: 30.7 expected
		t.Fatalf("%d of %d trace IDs under the 1%% threshold", below, len(lowBits))
	}
}

// chunksOf reads a retrieval span's chunks back in its dialect.
func chunksOf(t *testing.T, rs retrievalSpan) []string {
	t.Helper()
	a := rs.span.Attributes()
	var out []string
	switch rs.dialect {
	case DialectProject:
		v, _ := a.Get("rag.chunks")
		for _, c := range v.Slice().All() {
			out = append(out, c.Str())
		}
	case DialectGenAI:
		v, _ := a.Get("gen_ai.retrieval.documents")
		for part := range strings.SplitSeq(v.Str(), `"content":"`) {
			if end := strings.Index(part, `"}`); end >= 0 {
				out = append(out, part[:end])
			}
		}
	case DialectOpenInference:
		for k, v := range a.All() {
			if strings.HasSuffix(k, ".document.content") {
				out = append(out, v.Str())
			}
		}
	case DialectOpenLLMetry:
		for _, e := range rs.span.Events().All() {
			v, _ := e.Attributes().Get("db.query.result.document")
			out = append(out, v.Str())
		}
	}
	if len(out) != DefaultTraffic().Chunks {
		t.Fatalf("%s span has %d chunks", rs.dialect, len(out))
	}
	return out
}

func TestRepeatShareRepeatsEarlierRetrievals(t *testing.T) {
	tr := DefaultTraffic()
	tr.RepeatShare = 0.5
	b := newBatch(tr, 0, 7)
	queries := map[string]int{}
	for range 20 {
		b.fill(time.Now())
		for _, rs := range b.retrievals {
			v, _ := rs.span.Attributes().Get("rag.query")
			queries[v.Str()]++
		}
	}
	total := 20 * tr.RetrievalsPerBatch()
	repeated := total - len(queries)
	if repeated < total*35/100 || repeated > total*65/100 {
		t.Fatalf("%d of %d retrievals repeated, want about half", repeated, total)
	}
}

// The processor itself reads the traffic as intended: at 100% with the
// offline judge, every retrieval span of every dialect is scored (the
// reference read from rag.reference, as ReferenceKey says), and no plain
// span is a candidate.
func TestTheProcessorScoresEveryRetrieval(t *testing.T) {
	f := ragprecisionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*config.Config)
	cfg.Attributes.Reference = ReferenceKey
	next := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(component.MustNewType("ragprecision")), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	b := newBatch(allDialects(), 0, 3)
	b.fill(time.Now())
	// Counted before the call: the processor takes the spans it holds out
	// of the batch it is given.
	sent := b.td.SpanCount()
	if err := p.ConsumeTraces(context.Background(), b.td); err != nil {
		t.Fatal(err)
	}
	// Spans judged inline come back at once; past the processor's inline
	// time budget (a slow machine, the race detector) the rest are held,
	// judged in the background and forwarded when scored.
	for deadline := time.Now().Add(time.Minute); next.SpanCount() < sent; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d spans forwarded", next.SpanCount(), sent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	scored := map[string]int{}
	plainTouched := 0
	for _, td := range next.AllTraces() {
		for _, s := range spansOf(td) {
			st, ok := s.Attributes().Get("rag.contextual_precision.status")
			switch {
			case strings.HasPrefix(s.Name(), "GET "):
				if ok {
					plainTouched++
				}
			case ok:
				scored[s.Name()+": "+st.Str()]++
			}
		}
	}
	per := allDialects().RetrievalsPerBatch() / 4 // 51 = 13+13+13+12
	for _, name := range []string{"retrieve", "retrieval handbook", "retriever", "chroma.query"} {
		if n := scored[name+": scored"]; n < per {
			t.Errorf("%s: %d scored, want at least %d (all: %v)", name, n, per, scored)
		}
	}
	if plainTouched != 0 {
		t.Errorf("%d plain spans have a status", plainTouched)
	}
}

func spansOf(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out = append(out, s)
			}
		}
	}
	return out
}
