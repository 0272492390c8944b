package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ranking is the relevance of a retrieval's chunks in rank order, as the
// keyword judge will see it, and the Contextual Precision that follows.
type ranking struct {
	relevant []bool
	cp       float64
}

// Good retrievals put the relevant chunks first (mean CP 0.854); bad ones
// bury them or miss them (mean 0.354). Each phase cycles through its four.
var (
	goodRankings = []ranking{
		{[]bool{true, true, false}, 1},
		{[]bool{true, false, true}, 5.0 / 6},
		{[]bool{false, true, true}, 7.0 / 12},
		{[]bool{true, false, false}, 1},
	}
	badRankings = []ranking{
		{[]bool{false, false, true}, 1.0 / 3},
		{[]bool{false, true, false}, 0.5},
		{[]bool{false, true, true}, 7.0 / 12},
		{[]bool{false, false, false}, 0},
	}
)

const (
	trafficService    = "ragshop"
	trafficDataSource = "docs-search"
	// trafficKeyword makes a chunk relevant to chattest.KeywordJudge.
	trafficKeyword = "Paris"
)

// sentRetrieval is a retrieval span the generator sent.
type sentRetrieval struct {
	at              time.Time
	cp              float64
	traceID, spanID string
}

// trafficGen sends retrieval spans of the project dialect over OTLP/gRPC at
// a steady rate, with rankings from the current phase.
type trafficGen struct {
	tp    *sdktrace.TracerProvider
	tr    trace.Tracer
	phase atomic.Pointer[[]ranking]
	n     int

	mu       sync.Mutex
	sent     []sentRetrieval
	stopOnce sync.Once
}

func newTrafficGen(ctx context.Context, t *testing.T, endpoint string) *trafficGen {
	t.Helper()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(100*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", trafficService))))
	g := &trafficGen{tp: tp, tr: tp.Tracer("ragtraffic")}
	g.setPhase(goodRankings)
	return g
}

func (g *trafficGen) setPhase(r []ranking) { g.phase.Store(&r) }

// send sends one retrieval: a root span and the retrieval span under it.
// Relevant chunks repeat every 40 retrievals, so the verdict cache has hits;
// irrelevant ones are new each time, so the judge keeps being asked.
func (g *trafficGen) send(ctx context.Context) {
	rankings := *g.phase.Load()
	r := rankings[g.n%len(rankings)]
	chunks := make([]string, len(r.relevant))
	for i, rel := range r.relevant {
		if rel {
			chunks[i] = fmt.Sprintf("%s is the capital of France (note %d.%d).", trafficKeyword, g.n%40, i)
		} else {
			chunks[i] = fmt.Sprintf("Berlin is the capital of Germany (note %d.%d).", g.n, i)
		}
	}
	g.n++
	ctx, root := g.tr.Start(ctx, "answer")
	_, s := g.tr.Start(ctx, trafficDataSource, trace.WithAttributes(
		attribute.String("rag.query", "What is the capital of France?"),
		attribute.String("rag.reference", "Paris"),
		attribute.StringSlice("rag.chunks", chunks)))
	s.End()
	root.End()
	sc := s.SpanContext()
	g.mu.Lock()
	g.sent = append(g.sent, sentRetrieval{at: time.Now(), cp: r.cp, traceID: sc.TraceID().String(), spanID: sc.SpanID().String()})
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
