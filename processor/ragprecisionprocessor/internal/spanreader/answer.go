package spanreader

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// AnswerSpan is a span that can give its trace's answer (SPEC §3,
// trace_join): the trace's root span, or an LLM span.
type AnswerSpan struct {
	// Text is the answer, cut to the reader's byte limit.
	Text string
	// Root is true for the trace's root span, whose answer is final.
	Root bool
	// End is when the span ended; among LLM spans the last-ending one wins.
	End pcommon.Timestamp
}

// llmOperations are the gen_ai.operation.name values of model calls.
var llmOperations = map[string]bool{"chat": true, "text_completion": true, "generate_content": true}

// TraceAnswer reports whether span carries an answer for its trace: the
// configured answer attribute, OpenInference output.value, GenAI
// gen_ai.output.messages or OpenLLMetry traceloop.entity.output, on a root
// span or an LLM span.
func (r *Reader) TraceAnswer(span ptrace.Span) (AnswerSpan, bool) {
	root := span.ParentSpanID().IsEmpty()
	attrs := span.Attributes()
	if !root && !isLLMSpan(attrs) {
		return AnswerSpan{}, false
	}
	text := ""
	if r.keys.Answer != "" {
		text = str(attrs, r.keys.Answer)
	}
	if text == "" {
		text = str(attrs, keyOIOutput)
	}
	if text == "" {
		text = genAIOutputText(str(attrs, keyGenAIOutput), r.limits.MaxBytes)
	}
	if text == "" {
		text = traceloopOutputText(str(attrs, keyTraceloopOutput), r.limits.MaxBytes)
	}
	if strings.TrimSpace(text) == "" {
		return AnswerSpan{}, false
	}
	if len(text) > r.limits.MaxBytes {
		text = strings.ToValidUTF8(text[:r.limits.MaxBytes], "")
	}
	return AnswerSpan{Text: text, Root: root, End: span.EndTimestamp()}, true
}

func isLLMSpan(attrs pcommon.Map) bool {
	if v := str(attrs, keyOISpanKind); v == oiLLM {
		return true
	}
	if llmOperations[str(attrs, keyGenAIOperation)] {
		return true
	}
	_, ok := attrs.Get(keyLLMRequestType)
	return ok
}

// genAIOutputText joins the text parts of gen_ai.output.messages:
// [{"role": "assistant", "parts": [{"type": "text", "content": "…"}]}].
func genAIOutputText(s string, limit int) string {
	if s == "" || len(s) > limit {
		return ""
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"`
		Parts   []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if json.Unmarshal([]byte(s), &msgs) != nil {
		return ""
	}
	var parts []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "text" && p.Content != "" {
				parts = append(parts, p.Content)
			}
		}
		var c string
		if len(m.Parts) == 0 && json.Unmarshal(m.Content, &c) == nil && c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "\n")
}

// traceloopOutputText is the text of a traceloop.entity.output: a JSON
// string, an object's answer-like field, or the raw value when not JSON.
func traceloopOutputText(s string, limit int) string {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > limit {
		return ""
	}
	if t[0] != '{' && t[0] != '"' {
		return s
	}
	return jsonString([]byte(t), answerFields, 0)
}
