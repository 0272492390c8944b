package recording

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// diagnostics are the retrieval diagnostics the processor writes beside
// the score.
var diagnostics = map[string]bool{
	ragattr.RetrievalOutcome:  true,
	ragattr.FirstRelevantRank: true,
	ragattr.ReciprocalRank:    true,
	ragattr.NDCG:              true,
	ragattr.PrecisionAtK:      true,
}

// IsAnnotation reports whether an attribute key is one the processor
// writes: rag.contextual_precision and everything under it (the status
// among them), and the retrieval diagnostics.
func IsAnnotation(key string) bool {
	if key == ragattr.Precision || strings.HasPrefix(key, ragattr.Precision+".") {
		return true
	}
	return diagnostics[key]
}

// isEvaluation reports whether an event is the processor's
// gen_ai.evaluation.result; other evaluators' results are left alone.
func isEvaluation(ev ptrace.SpanEvent) bool {
	if ev.Name() != ragattr.EvaluationEvent {
		return false
	}
	v, ok := ev.Attributes().Get(ragattr.EvaluationName)
	return ok && v.Str() == ragattr.ContextualPrecision
}

// Strip takes off span what the processor wrote on it, so that a
// processor it passes through again judges it as new (a span that carries
// a status is passed on untouched), and reports whether there was anything.
func Strip(span ptrace.Span) bool {
	stripped := false
	span.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool {
		if IsAnnotation(k) {
			stripped = true
			return true
		}
		return false
	})
	span.Events().RemoveIf(func(ev ptrace.SpanEvent) bool {
		if isEvaluation(ev) {
			stripped = true
			return true
		}
		return false
	})
	return stripped
}
