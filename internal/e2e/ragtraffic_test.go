package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/scoring"
)

// ranking is the relevance of a retrieval's chunks in rank order, as the
// keyword judge will see it, and the Contextual Precision that follows.
type ranking struct {
	relevant []bool
	cp       float64
}

// relevantAt is the relevance of k chunks of which those at the given
// 1-based ranks are relevant.
func relevantAt(k int, ranks ...int) []bool {
	out := make([]bool, k)
	for _, r := range ranks {
		out[r-1] = true
	}
	return out
}

// Good retrievals put the relevant chunks first (mean CP 0.854); bad ones
// bury them or miss them (mean 0.354). Each phase cycles through its four,
// of which one retrieves 12 chunks, so that every rank of the rank profile,
// 1 … 10 and 11+, is judged and has relevant chunks.
var (
	goodRankings = []ranking{
		{[]bool{true, true, false}, 1},
		{relevantAt(12, 1, 2, 3, 12), (1 + 1 + 1 + 4.0/12) / 4}, // 5/6
		{[]bool{false, true, true}, 7.0 / 12},
		{[]bool{true, false, false}, 1},
	}
	badRankings = []ranking{
		{relevantAt(12, 2, 12), (1.0/2 + 2.0/12) / 2}, // 1/3
		{[]bool{false, true, false}, 0.5},
		{[]bool{false, true, true}, 7.0 / 12},
		{[]bool{false, false, false}, 0},
	}
	// regressedRankings are a retriever that ranks every other retrieval
	// badly: mean 0.604.
	regressedRankings = interleave(goodRankings, badRankings)
)

// interleave returns a[0], b[0], a[1], b[1], … of two lists of one length.
func interleave(a, b []ranking) []ranking {
	out := make([]ranking, 0, len(a)+len(b))
	for i := range a {
		out = append(out, a[i], b[i])
	}
	return out
}

const (
	trafficService    = "ragshop"
	trafficDataSource = "docs-search"
	// trafficKeyword makes a chunk relevant to chattest.KeywordJudge.
	trafficKeyword = "Paris"
	// trafficVariantAttribute names the retriever on a retrieval span; the
	// live collectors read it as attributes.variant.
	trafficVariantAttribute = "retriever.version"
)

// sentRetrieval is a retrieval span the generator sent.
type sentRetrieval struct {
	at              time.Time
	cp              float64
	variant         string
	traceID, spanID string
}

// trafficGen sends retrieval spans of the project dialect over OTLP/gRPC at
// a steady rate, from its variants in turn, each with rankings from its
// current phase.
type trafficGen struct {
	tp       *sdktrace.TracerProvider
	tr       trace.Tracer
	variants []*variantFeed
	n        int // retrievals sent, over all variants

	mu       sync.Mutex
	sent     []sentRetrieval
	stopOnce sync.Once
}

// variantFeed is one variant's traffic: its rankings, and how many
// retrievals it sent, so that each variant cycles through its rankings in
// the same order whatever the others do.
type variantFeed struct {
	name  string // "" sets no variant attribute
	phase atomic.Pointer[[]ranking]
	n     int
}

// newTrafficGen sends to endpoint from the named variants in turn (their
// name in trafficVariantAttribute), or without one when none is named, all
// with good rankings.
func newTrafficGen(ctx context.Context, t *testing.T, endpoint string, variants ...string) *trafficGen {
	t.Helper()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(100*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", trafficService))))
	g := &trafficGen{tp: tp, tr: tp.Tracer("ragtraffic")}
	if len(variants) == 0 {
		variants = []string{""}
	}
	for _, v := range variants {
		g.variants = append(g.variants, &variantFeed{name: v})
	}
	g.setPhase(goodRankings)
	return g
}

// setPhase gives every variant the rankings r.
func (g *trafficGen) setPhase(r []ranking) {
	for _, v := range g.variants {
		v.phase.Store(&r)
	}
}

// setVariantPhase gives the variant named v the rankings r.
func (g *trafficGen) setVariantPhase(v string, r []ranking) {
	for _, f := range g.variants {
		if f.name == v {
			f.phase.Store(&r)
		}
	}
}

// send sends one retrieval of the next variant: a root span and the
// retrieval span under it. Relevant chunks repeat every 40 retrievals, so
// the verdict cache has hits; irrelevant ones are new each time, so the
// judge keeps being asked.
func (g *trafficGen) send(ctx context.Context) {
	v := g.variants[g.n%len(g.variants)]
	rankings := *v.phase.Load()
	r := rankings[v.n%len(rankings)]
	v.n++
	chunks := make([]string, len(r.relevant))
	for i, rel := range r.relevant {
		if rel {
			chunks[i] = fmt.Sprintf("%s is the capital of France (note %d.%d).", trafficKeyword, g.n%40, i)
		} else {
			chunks[i] = fmt.Sprintf("Berlin is the capital of Germany (note %d.%d).", g.n, i)
		}
	}
	g.n++
	attrs := []attribute.KeyValue{
		attribute.String("rag.query", "What is the capital of France?"),
		attribute.String("rag.reference", "Paris"),
		attribute.StringSlice("rag.chunks", chunks),
	}
	if v.name != "" {
		attrs = append(attrs, attribute.String(trafficVariantAttribute, v.name))
	}
	ctx, root := g.tr.Start(ctx, "answer")
	_, s := g.tr.Start(ctx, trafficDataSource, trace.WithAttributes(attrs...))
	s.End()
	root.End()
	sc := s.SpanContext()
	g.mu.Lock()
	g.sent = append(g.sent, sentRetrieval{at: time.Now(), cp: r.cp, variant: v.name, traceID: sc.TraceID().String(), spanID: sc.SpanID().String()})
	g.mu.Unlock()
}

// run sends perSecond retrievals a second, in tenths of a second, until ctx
// ends.
func (g *trafficGen) run(ctx context.Context, perSecond int) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for due := perSecond / 10; due > 0; due-- {
			g.send(ctx)
		}
	}
}

// retrievals returns what was sent so far.
func (g *trafficGen) retrievals() []sentRetrieval {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]sentRetrieval(nil), g.sent...)
}

// shutdown flushes and stops the generator's SDK; only the first call does
// anything.
func (g *trafficGen) shutdown(t *testing.T) {
	g.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.tp.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
}

// TestTrafficRankings holds the rankings to what they are documented to be:
// each CP as scoring computes it, the phases' means, and a ranking deep
// enough for the rank profile's 11+ in each phase.
func TestTrafficRankings(t *testing.T) {
	for name, c := range map[string]struct {
		rankings []ranking
		mean     float64
	}{
		"good": {goodRankings, 0.854}, "bad": {badRankings, 0.354}, "regressed": {regressedRankings, 0.604},
	} {
		var mean scoring.Stats
		deep := false
		for _, r := range c.rankings {
			want := 0.0
			if s, ok := scoring.ContextualPrecision(r.relevant, 0); ok {
				want = s.Value
			}
			if math.Abs(r.cp-want) > 1e-12 {
				t.Errorf("%s ranking %v: cp %v, scoring says %v", name, r.relevant, r.cp, want)
			}
			mean.Add(r.cp)
			deep = deep || len(r.relevant) > 10 && slices.Contains(r.relevant[10:], true)
		}
		if math.Abs(mean.Mean()-c.mean) > 0.0005 {
			t.Errorf("%s rankings: mean CP %.4f, documented %.3f", name, mean.Mean(), c.mean)
		}
		if !deep {
			t.Errorf("%s rankings: none has a relevant chunk at rank 11 or below", name)
		}
	}
}

// trafficRerankSource is the data source (the span name) of the rerank
// spans runReranks sends.
const trafficRerankSource = "docs-rerank"

// sendRerank sends one OpenInference RERANKER span, under a root of its
// own, with its input and output rankings. Three of four reranks move the
// two relevant documents up (output [1,1,0], CP 1, from an input whose
// first three are [0,1,1], CP 7/12: a lift of 5/12); the fourth moves them
// down (the reverse: a lift of -5/12), so that the loss counter counts too.
func (g *trafficGen) sendRerank(ctx context.Context, n int) {
	relevant := func(i int) string {
		return fmt.Sprintf("%s is the capital of France (rerank note %d.%d).", trafficKeyword, n%40, i)
	}
	other := func(i int) string { return fmt.Sprintf("Berlin is the capital of Germany (rerank %d.%d).", n, i) }
	input := []string{other(0), relevant(1), relevant(2), other(3)}
	output := []string{input[1], input[2], input[0]}
	if n%4 == 3 {
		input = []string{relevant(1), relevant(2), other(0), other(3)}
		output = []string{input[2], input[0], input[1]}
	}
	attrs := []attribute.KeyValue{
		attribute.String("openinference.span.kind", "RERANKER"),
		attribute.String("reranker.query", "What is the capital of France?"),
	}
	for i, d := range input {
		attrs = append(attrs, attribute.String(fmt.Sprintf("reranker.input_documents.%d.document.content", i), d))
	}
	for i, d := range output {
		attrs = append(attrs, attribute.String(fmt.Sprintf("reranker.output_documents.%d.document.content", i), d))
	}
	ctx, root := g.tr.Start(ctx, "answer")
	_, s := g.tr.Start(ctx, trafficRerankSource, trace.WithAttributes(attrs...))
	s.End()
	root.End()
}

// runReranks sends perSecond reranks a second until ctx ends.
func (g *trafficGen) runReranks(ctx context.Context, perSecond int) {
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g.sendRerank(ctx, n)
	}
}
