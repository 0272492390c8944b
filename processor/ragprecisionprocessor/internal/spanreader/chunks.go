package spanreader

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// textFields are the object fields that hold a document's text, in order of
// preference: GenAI uses content (else text), LangChain page_content.
var textFields = [...]string{"content", "text", "page_content"}

// documentFields are where a JSON document's text is looked for.
var documentFields = append(textFields[:], "document", "kwargs")

// chunksFromValue reads the chunks held by one attribute: a string array (or
// an array of objects with a text field), or a JSON string encoding one. A
// plain string that is not JSON is one chunk.
func (r *Reader) chunksFromValue(attrs pcommon.Map, key string, budget *byteBudget) ([]string, error) {
	v, ok := attrs.Get(key)
	if !ok {
		return nil, ErrNoChunks
	}
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		n, err := r.keep(s.Len())
		if err != nil {
			return nil, err
		}
		chunks := make([]string, n)
		for i := range n {
			chunks[i] = valueText(s.At(i))
			if !budget.take(len(chunks[i])) {
				return nil, ErrTooLarge
			}
		}
		return chunks, nil
	case pcommon.ValueTypeStr:
		return r.chunksFromString(v.Str(), budget)
	}
	return nil, ErrNoChunks
}

// chunksFromString decodes a JSON array of documents, or takes a non-JSON
// string as a single chunk. JSON larger than the byte budget is refused
// before it is parsed, which bounds the parser's work.
func (r *Reader) chunksFromString(s string, budget *byteBudget) ([]string, error) {
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return nil, ErrNoChunks
	}
	if trimmed[0] != '[' && trimmed[0] != '{' {
		if _, err := r.keep(1); err != nil {
			return nil, err
		}
		if !budget.take(len(s)) {
			return nil, ErrTooLarge
		}
		return []string{s}, nil
	}
	if len(trimmed) > budget.left {
		return nil, ErrTooLarge
	}
	docs, ok := documentsJSON([]byte(trimmed))
	if !ok {
		return nil, ErrNoChunks
	}
	return r.docChunks(docs, budget)
}

// documentsJSON finds the array of documents in a JSON text: the text itself
// when it is an array, else the first of documents, outputs, output that is.
func documentsJSON(data []byte) ([]json.RawMessage, bool) {
	var docs []json.RawMessage
	if data[0] == '[' {
		return docs, json.Unmarshal(data, &docs) == nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil, false
	}
	for _, k := range [...]string{"documents", "outputs", "output"} {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '{' {
			if inner, ok := documentsJSON(raw); ok {
				return inner, true
			}
			continue
		}
		if json.Unmarshal(raw, &docs) == nil {
			return docs, true
		}
	}
	return nil, false
}

func (r *Reader) docChunks(docs []json.RawMessage, budget *byteBudget) ([]string, error) {
	n, err := r.keep(len(docs))
	if err != nil {
		return nil, err
	}
	chunks := make([]string, n)
	for i := range n {
		chunks[i] = jsonText(docs[i])
		if !budget.take(len(chunks[i])) {
			return nil, ErrTooLarge
		}
	}
	return chunks, nil
}

// jsonText is the text of one JSON document: a string, or the first text
// field of an object (also inside a nested "document" or "kwargs" object, as
// OpenInference and LangChain serialise documents). Anything else keeps its
// rank as an empty chunk, so that the ranks of the others stay right.
func jsonText(raw json.RawMessage) string {
	return jsonString(raw, documentFields, 0)
}

// valueText is the text of one element of a chunks array.
func valueText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeMap:
		m := v.Map()
		for _, f := range textFields {
			if t, ok := m.Get(f); ok && t.Type() == pcommon.ValueTypeStr {
				return t.Str()
			}
		}
		if d, ok := m.Get("document"); ok {
			return valueText(d)
		}
	case pcommon.ValueTypeInt, pcommon.ValueTypeDouble, pcommon.ValueTypeBool:
		return v.AsString()
	}
	return ""
}

// openInferenceChunks reads retrieval.documents.{i}.document.content in the
// order of i. Indices need not be contiguous; duplicates cannot occur since
// attribute keys are unique.
func (r *Reader) openInferenceChunks(attrs pcommon.Map, budget *byteBudget) ([]string, error) {
	type doc struct {
		index int
		text  string
	}
	var docs []doc
	for k, v := range attrs.All() {
		if !strings.HasPrefix(k, oiDocumentsPrefix) || !strings.HasSuffix(k, oiContentSuffix) {
			continue
		}
		idx := k[len(oiDocumentsPrefix) : len(k)-len(oiContentSuffix)]
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || strconv.Itoa(i) != idx {
			continue // not a plain index ("+1", "01", "a"): not this convention
		}
		docs = append(docs, doc{index: i, text: valueText(v)})
	}
	n, err := r.keep(len(docs))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b doc) int { return a.index - b.index })
	chunks := make([]string, n)
	for i := range n {
		chunks[i] = docs[i].text
		if !budget.take(len(chunks[i])) {
			return nil, ErrTooLarge
		}
	}
	return chunks, nil
}

// openLLMetryChunks reads db.query.result events in order, else the
// documents of traceloop.entity.output.
func (r *Reader) openLLMetryChunks(span ptrace.Span, budget *byteBudget) ([]string, error) {
	events := span.Events()
	count := 0
	for i := 0; i < events.Len(); i++ {
		if events.At(i).Name() == eventDBQueryResult {
			count++
		}
	}
	if count == 0 {
		v, ok := span.Attributes().Get(keyTraceloopOutput)
		if !ok || v.Type() != pcommon.ValueTypeStr {
			return nil, ErrNoChunks
		}
		return r.chunksFromString(v.Str(), budget)
	}
	n, err := r.keep(count)
	if err != nil {
		return nil, err
	}
	chunks := make([]string, 0, n)
	for i := 0; i < events.Len() && len(chunks) < n; i++ {
		e := events.At(i)
		if e.Name() != eventDBQueryResult {
			continue
		}
		var text string
		if v, ok := e.Attributes().Get(keyDBQueryResultDoc); ok {
			text = valueText(v)
		}
		if !budget.take(len(text)) {
			return nil, ErrTooLarge
		}
		chunks = append(chunks, text)
	}
	return chunks, nil
}

// holdsDocuments reports whether a traceloop.entity.output carries
// documents that Read can take chunks from. Recognise runs it on every
// OpenLLMetry span, so the JSON is parsed only when the text mentions
// page_content; an output too large to parse within the byte limit is taken
// as a retrieval (it will pass with status too_large).
func (r *Reader) holdsDocuments(s string) bool {
	if !strings.Contains(s, traceloopDocumentsKey) {
		return false
	}
	trimmed := strings.TrimSpace(s)
	if len(trimmed) > r.limits.MaxBytes {
		return true
	}
	if trimmed == "" || (trimmed[0] != '[' && trimmed[0] != '{') {
		return false
	}
	docs, ok := documentsJSON([]byte(trimmed))
	if !ok {
		return false
	}
	for _, d := range docs {
		if jsonText(d) != "" {
			return true
		}
	}
	return false
}

// traceloopQuery is the query of an OpenLLMetry span: the query field of
// traceloop.entity.input (a JSON object, possibly under inputs or kwargs, or
// a JSON string), else db.query.text.
func (r *Reader) traceloopQuery(attrs pcommon.Map) string {
	if in := str(attrs, keyTraceloopInput); in != "" && len(in) <= r.limits.MaxBytes {
		if q := jsonString([]byte(in), queryFields, 0); q != "" {
			return q
		}
	}
	return str(attrs, keyDBQueryText)
}

// queryFields and answerFields are where JSON inputs and outputs of
// LangChain-style frameworks keep the question and the answer, in order of
// preference; nested objects (inputs, kwargs, outputs) are looked into.
var (
	queryFields  = []string{"query", "input", "question", "inputs", "kwargs"}
	answerFields = []string{"answer", "output", "result", "text", "content", "outputs"}
)

// maxJSONDepth bounds how deep jsonString looks into nested objects.
const maxJSONDepth = 3

// jsonString finds text in a JSON value: a string is itself, and in an
// object the first of fields that holds text, looked for recursively.
func jsonString(data []byte, fields []string, depth int) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ""
	}
	switch data[0] {
	case '"':
		var s string
		if json.Unmarshal(data, &s) == nil {
			return s
		}
	case '{':
		if depth >= maxJSONDepth {
			return ""
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return ""
		}
		for _, k := range fields {
			if v, ok := obj[k]; ok {
				if t := jsonString(v, fields, depth+1); t != "" {
					return t
				}
			}
		}
	}
	return ""
}
