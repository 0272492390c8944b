package spanreader

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// AnswerSpan is a span that can give its trace's answer (the README,
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
