package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// result is what came back for one sent case.
type result struct {
	sentCase
	received        bool
	status          string // "" when the span came back without a status
	score           float64
	scored          bool // score and passed are set
	passed          bool
	verdicts        []bool
	referenceSource string
	judge           string
	explanation     string // of the gen_ai.evaluation.result event
	// retrievalOutcome (ideal, misranked or miss) and ndcg are the
	// processor's retrieval diagnostics of a scored span.
	retrievalOutcome string
	ndcg             float64
	hasNDCG          bool
	// variant is the retriever version on the span that came back.
	variant string
}

// outcome is everything the demo learned from the spans that came back.
type outcome struct {
	results []result
	// plainChanged lists plain spans that came back missing or altered.
	plainChanged []string
}

// waitForSpans waits until every span s holds has come back through sink,
// and returns how many of them have. Other spans are not counted: a
// collector that ran before the demo may still be delivering older traffic.
func waitForSpans(ctx context.Context, sink *otlpsink.Sink, s sent) (int, error) {
	ours := s.traceIDs()
	for {
		received, total := sink.Traces(), 0
		got := 0
		for _, td := range received {
			total += td.SpanCount()
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						if ours[span.TraceID()] {
							got++
						}
					}
				}
			}
		}
		if got >= s.spans {
			return got, nil
		}
		if _, err := sink.WaitForSpans(ctx, total+1); err != nil {
			return got, err
		}
	}
}

// collectResults matches the spans received by the sink with what was sent.
func collectResults(s sent, received []ptrace.Traces) outcome {
	spans := map[pcommon.SpanID]ptrace.Span{}
	for _, td := range received {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					spans[ss.At(k).SpanID()] = ss.At(k)
				}
			}
		}
	}

	var o outcome
	for _, c := range s.cases {
		r := result{sentCase: c}
		if span, ok := spans[pcommon.SpanID(c.retrieval)]; ok {
			r.received = true
			readResult(&r, span)
		}
		o.results = append(o.results, r)
	}
	for _, id := range s.plain {
		span, ok := spans[pcommon.SpanID(id)]
		switch {
		case !ok:
			o.plainChanged = append(o.plainChanged, fmt.Sprintf("span %s did not come back", id))
		case hasEvaluation(span):
			o.plainChanged = append(o.plainChanged, fmt.Sprintf("span %q (%s) was annotated", span.Name(), id))
		}
	}
	return o
}

// readResult reads the processor's annotations of a retrieval span.
func readResult(r *result, span ptrace.Span) {
	attrs := span.Attributes()
	if v, ok := attrs.Get(ragattr.Status); ok {
		r.status = v.AsString()
	}
	if v, ok := attrs.Get(ragattr.Precision); ok && v.Type() == pcommon.ValueTypeDouble {
		r.score, r.scored = v.Double(), true
	}
	if v, ok := attrs.Get(ragattr.Passed); ok {
		r.passed = v.Bool()
	}
	if v, ok := attrs.Get(ragattr.Verdicts); ok && v.Type() == pcommon.ValueTypeSlice {
		for _, e := range v.Slice().All() {
			r.verdicts = append(r.verdicts, e.Bool())
		}
	}
	if v, ok := attrs.Get(ragattr.ReferenceSource); ok {
		r.referenceSource = v.AsString()
	}
	if v, ok := attrs.Get(ragattr.Judge); ok {
		r.judge = v.AsString()
	}
	if v, ok := attrs.Get(ragattr.RetrievalOutcome); ok {
		r.retrievalOutcome = v.AsString()
	}
	if v, ok := attrs.Get(ragattr.NDCG); ok && v.Type() == pcommon.ValueTypeDouble {
		r.ndcg, r.hasNDCG = v.Double(), true
	}
	if v, ok := attrs.Get(variantAttribute); ok {
		r.variant = v.AsString()
	}
	for _, e := range span.Events().All() {
		if e.Name() != ragattr.EvaluationEvent {
			continue
		}
		if v, ok := e.Attributes().Get(ragattr.EvaluationExplanation); ok {
			r.explanation = v.AsString()
		}
	}
}

// annotationPrefixes start the keys of every attribute the processor writes.
var annotationPrefixes = []string{ragattr.Precision, "rag.retrieval."}

// hasEvaluation reports whether the processor left any trace on span.
func hasEvaluation(span ptrace.Span) bool {
	for k := range span.Attributes().All() {
		for _, p := range annotationPrefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
	}
	for _, e := range span.Events().All() {
		if e.Name() == ragattr.EvaluationEvent {
			return true
		}
	}
	return false
}
