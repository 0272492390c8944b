package spanreader

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// AnswerSpan is a span that can give its trace's answer (docs/SOURCES.md,
// trace_join): the trace's root span, or an LLM span.
type AnswerSpan struct {
	// Text is the answer, cut to the reader's byte limit.
	Text string
	// Root is true for the trace's root span, whose answer is final.
	Root bool
	// End is when the span ended; among LLM spans the last-ending one wins.
	End pcommon.Timestamp
}

// TraceAnswer reports whether span carries an answer for its trace: the
// configured answer attribute, else the answer attribute of the first of
// answerers that has one (OpenInference output.value, GenAI
// gen_ai.output.messages, OpenLLMetry traceloop.entity.output), on a root
// span or a model call.
func (r *Reader) TraceAnswer(span ptrace.Span) (AnswerSpan, bool) {
	root := span.ParentSpanID().IsEmpty()
	var obs observation
	r.observe(span, &obs)
	if !root && r.classify(span, &obs)&classModelCall == 0 {
		return AnswerSpan{}, false
	}
	text := obs.answerText()
	for _, d := range answerers {
		if text != "" {
			break
		}
		text = dialects[d].answer(r, obs.watched[d])
	}
	if strings.TrimSpace(text) == "" {
		return AnswerSpan{}, false
	}
	if len(text) > r.limits.MaxBytes {
		text = strings.ToValidUTF8(text[:r.limits.MaxBytes], "")
	}
	return AnswerSpan{Text: text, Root: root, End: span.EndTimestamp()}, true
}

// JoinedAnswer is what a trace has said about its answer so far, gathered
// from its answer spans (TraceAnswer) in the order they arrive: the root
// span's answer once the root has been seen, else the last-ending LLM
// span's. The processor's trace_join and the offline replay of a recording
// rebuild a trace's answer with it, so that both pick the same text.
type JoinedAnswer struct {
	// Root is the root span's answer, when RootSeen.
	Root string
	// RootSeen is set once the root span has been seen (its answer may be
	// empty).
	RootSeen bool
	// LLM is the answer of the last-ending LLM span seen, ending at LLMEnd.
	LLM    string
	LLMEnd pcommon.Timestamp
}

// Observe notes an answer-bearing span: the root (its answer possibly
// empty), or an LLM span ending at end. It reports whether it was the
// root's first arrival, which ends the wait for the trace's answer.
func (a *JoinedAnswer) Observe(text string, root bool, end pcommon.Timestamp) bool {
	switch {
	case root:
		if !a.RootSeen {
			a.Root, a.RootSeen = text, true
			return true
		}
	case text != "" && end >= a.LLMEnd:
		a.LLM, a.LLMEnd = text, end
	}
	return false
}

// Best is the trace's answer: the root's, else the last LLM span's.
func (a *JoinedAnswer) Best() string {
	if a.Root != "" {
		return a.Root
	}
	return a.LLM
}

// Bytes is the text held.
func (a *JoinedAnswer) Bytes() int64 { return int64(len(a.Root) + len(a.LLM)) }
