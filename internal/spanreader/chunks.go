package spanreader

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// textFields are the map fields that hold a document's text, in order of
// preference: GenAI uses content (else text), LangChain page_content.
var textFields = [...]string{"content", "text", "page_content"}

// chunksFromValue reads the chunks held by one attribute: a string array (or
// an array of maps with a text field), or a JSON string encoding one. A
// plain string that is not JSON is one chunk: a retrieval of one document
// is text like any other. An int, bool or double, or an array of them, holds
// no text and is ErrNoChunks.
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

// chunksFromString decodes a JSON array of documents (or an object holding
// one, see findDocuments), or takes a non-JSON string as a single chunk.
// JSON larger than the byte budget is refused before it is parsed.
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
	docs, ok := findDocuments(trimmed)
	if !ok {
		return nil, ErrNoChunks
	}
	return r.docChunks(docs, budget)
}

// docChunks reads the text of each document of a JSON array that
// findDocuments has checked: a string, or the first text field of an object
// (also inside a nested "document" or "kwargs" object, as OpenInference and
// LangChain serialise documents). Anything else keeps its rank as an empty
// chunk, so that the ranks of the others stay right. The documents are
// counted first (up to one more than the limits allow), so that only the
// chunks kept are allocated.
func (r *Reader) docChunks(docs string, budget *byteBudget) ([]string, error) {
	limit := r.limits.MaxChunks
	if limit < math.MaxInt {
		limit++ // one more than allowed tells ErrTooLarge
	}
	if r.limits.TopK > 0 {
		limit = min(limit, r.limits.TopK)
	}
	count := 0
	it := newArrayItems(docs)
	for count < limit && it.next() {
		it.sc.skip()
		count++
	}
	it.done()
	n, err := r.keep(count)
	if err != nil {
		return nil, err
	}
	chunks := make([]string, n)
	it = newArrayItems(docs)
	defer it.done()
	for i := 0; i < n && it.next(); i++ {
		raw, ok := it.sc.textIn(documentFields, 0)
		if !ok {
			return nil, ErrNoChunks // cannot happen: findDocuments checked it
		}
		chunks[i] = textOf(raw)
		if !budget.take(len(chunks[i])) {
			return nil, ErrTooLarge
		}
	}
	return chunks, nil
}

// textOf decodes a string token a finder returned; "" stays "".
func textOf(raw string) string {
	if raw == "" {
		return ""
	}
	return decodeString(raw)
}

// valueText is the text of one element of a chunks array: a string, or the
// text field of a map. A number or a bool is no text (""): [1, 2, 3] is an
// id or score list, not documents, and judging "1", "2", "3" would record a
// score of 0 for a retrieval that was never read; every element blank makes
// the retrieval no_chunks (see Read).
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
	}
	return ""
}
