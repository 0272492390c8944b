package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// Attributes the processor writes on spans (SPEC §5).
const (
	attrPrefix          = "rag.contextual_precision"
	attrScore           = attrPrefix
	attrPassed          = attrPrefix + ".passed"
	attrVerdicts        = attrPrefix + ".verdicts"
	attrReferenceSource = attrPrefix + ".reference_source"
	attrJudge           = attrPrefix + ".judge"
	attrStatus          = attrPrefix + ".status"
	eventEvaluation     = "gen_ai.evaluation.result"
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
	if v, ok := attrs.Get(attrStatus); ok {
		r.status = v.AsString()
	}
	if v, ok := attrs.Get(attrScore); ok && v.Type() == pcommon.ValueTypeDouble {
		r.score, r.scored = v.Double(), true
	}
	if v, ok := attrs.Get(attrPassed); ok {
		r.passed = v.Bool()
	}
	if v, ok := attrs.Get(attrVerdicts); ok && v.Type() == pcommon.ValueTypeSlice {
		for _, e := range v.Slice().All() {
			r.verdicts = append(r.verdicts, e.Bool())
		}
	}
	if v, ok := attrs.Get(attrReferenceSource); ok {
		r.referenceSource = v.AsString()
	}
	if v, ok := attrs.Get(attrJudge); ok {
		r.judge = v.AsString()
	}
	for _, e := range span.Events().All() {
		if e.Name() != eventEvaluation {
			continue
		}
		if v, ok := e.Attributes().Get("gen_ai.evaluation.explanation"); ok {
			r.explanation = v.AsString()
		}
	}
}

// hasEvaluation reports whether the processor left any trace on span.
func hasEvaluation(span ptrace.Span) bool {
	for k := range span.Attributes().All() {
		if strings.HasPrefix(k, attrPrefix) {
			return true
		}
	}
	for _, e := range span.Events().All() {
		if e.Name() == eventEvaluation {
			return true
		}
	}
	return false
}
