package spanreader

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The JSON finders as they were before the scanner (main at 0a23793): one
// json.Unmarshal per object looked into. They are kept here as the
// reference the scanner's answers are compared with (differential tests),
// and as the baseline of its benchmarks. legacyDocuments is the finder that
// took seconds on deeply nested documents.

func legacyDocuments(data []byte) ([]json.RawMessage, bool) {
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
			if inner, ok := legacyDocuments(raw); ok {
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

func legacyString(data []byte, fields []string, depth int) string {
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
		if depth >= maxTextDepth {
			return ""
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return ""
		}
		for _, k := range fields {
			if v, ok := obj[k]; ok {
				if t := legacyString(v, fields, depth+1); t != "" {
					return t
				}
			}
		}
	}
	return ""
}

// legacyHoldsDocuments is the old recognition of an OpenLLMetry output,
// with LlamaIndex.TS's node lists.
func legacyHoldsDocuments(s string, maxBytes int) bool {
	trimmed := strings.TrimSpace(s)
	if !strings.Contains(s, traceloopDocumentsKey) && !legacyStartsNodeList(trimmed) {
		return false
	}
	if len(trimmed) > maxBytes {
		return true
	}
	if trimmed == "" || (trimmed[0] != '[' && trimmed[0] != '{') {
		return false
	}
	docs, ok := legacyDocuments([]byte(trimmed))
	if !ok {
		return false
	}
	for _, d := range docs {
		if legacyString(d, documentFields, 0) != "" {
			return true
		}
	}
	return false
}

// legacyStartsNodeList reports whether a JSON text's first tokens are [,
// { and the key "node", written as such.
func legacyStartsNodeList(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	for _, want := range []json.Delim{'[', '{'} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return false
		}
	}
	before := dec.InputOffset()
	if tok, err := dec.Token(); err != nil || tok != "node" {
		return false
	}
	if strings.TrimSpace(s[before:dec.InputOffset()]) != `"node"` {
		return false
	}
	_, err := dec.Token() // the colon is read with the value
	return err == nil
}

// legacyChunks is the old reading of documents from a JSON text (without
// limits): ok false where findDocuments finds none.
func legacyChunks(trimmed string) ([]string, bool) {
	docs, ok := legacyDocuments([]byte(trimmed))
	if !ok {
		return nil, false
	}
	chunks := make([]string, len(docs))
	for i, d := range docs {
		chunks[i] = legacyString(d, documentFields, 0)
	}
	return chunks, true
}

func legacyMessagesText(s string) string {
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
