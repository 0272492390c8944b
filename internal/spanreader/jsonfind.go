package spanreader

import "strings"

// The finders: what the dialects look for in JSON, each one pass of the
// scanner over the text (plus, where noted, one more over the part of it
// that was chosen). A text that is not valid JSON as a whole finds nothing,
// as json.Unmarshal of it would have.

// documentKeys are where an object keeps its documents, in order of
// preference.
var documentKeys = [...]string{"documents", "outputs", "output"}

// findDocuments finds the array of documents in a JSON text (trimmed, and
// starting with '[' or '{'): the text itself when it is an array, else the
// value of the first of documentKeys that is an array, or null (no
// documents), or an object holding documents the same way. It returns the
// array's text, "" for null.
func findDocuments(text string) (docs string, found bool) {
	sc := newScanner(text)
	defer sc.done()
	if sc.peek() == '[' {
		docs, ok := sc.span()
		return docs, ok && sc.end()
	}
	docs, found, ok := sc.documentsIn()
	return docs, found && ok && sc.end()
}

// documentsIn reads the object at the position. Where a key repeats, its
// last value counts, as in a decoded map. Nested objects under document keys
// are searched as they are read, so that the text is read once however deep
// they go (up to maxNesting).
func (sc *scanner) documentsIn() (docs string, found, ok bool) {
	type candidate struct {
		kind  byte // 0 absent, '[' array, 'n' null, '{' object, 'x' other
		docs  string
		found bool // for objects: documents found inside
	}
	var cands [len(documentKeys)]candidate
	if !sc.open('{') {
		return "", false, false
	}
	for first := true; sc.more('}', &first); {
		k, ok := sc.key()
		if !ok {
			return "", false, false
		}
		idx := -1
		for j, name := range documentKeys {
			if keyIs(k, name) {
				idx = j
				break
			}
		}
		if idx < 0 {
			if !sc.skip() {
				return "", false, false
			}
			continue
		}
		var c candidate
		switch sc.peek() {
		case '{':
			c.kind = '{'
			if c.docs, c.found, ok = sc.documentsIn(); !ok {
				return "", false, false
			}
		case '[':
			c.kind = '['
			if c.docs, ok = sc.span(); !ok {
				return "", false, false
			}
		case 'n':
			c.kind = 'n'
			ok = sc.skip()
		default:
			c.kind = 'x'
			ok = sc.skip()
		}
		if !ok {
			return "", false, false
		}
		cands[idx] = c
	}
	if sc.bad {
		return "", false, false
	}
	for _, c := range cands {
		switch {
		case c.kind == '[', c.kind == 'n':
			// null decodes to no documents: found, and empty.
			return c.docs, true, true
		case c.kind == '{' && c.found:
			return c.docs, true, true
		}
	}
	return "", false, true
}

// arrayItems iterates over the elements of an array text that a finder has
// already checked.
type arrayItems struct {
	sc    scanner
	first bool
}

func newArrayItems(array string) arrayItems {
	it := arrayItems{sc: newScanner(array), first: true}
	if array == "" || !it.sc.open('[') {
		it.sc.i = len(array) // null, or not an array: no elements
		it.first = false
		it.sc.bad = true
	}
	return it
}

// next reports whether another element follows; the scanner is then at it.
func (it *arrayItems) next() bool {
	if it.sc.bad || it.sc.i >= len(it.sc.s) {
		return false
	}
	return it.sc.more(']', &it.first)
}

func (it *arrayItems) done() { it.sc.done() }

// maxTextDepth bounds how deep the text finders look into nested objects:
// {"inputs": {"kwargs": {"query": "…"}}} is as deep as frameworks go.
const maxTextDepth = 3

// textFields and the lists below are where JSON documents, inputs and
// outputs keep their text, in order of preference; nested objects under
// them (document, kwargs, inputs, outputs) are looked into.
var (
	// documentFields: GenAI uses content (else text), LangChain
	// page_content, OpenInference and LangChain's serialisation nest the
	// document under document or kwargs, LlamaIndex's NodeWithScore under
	// node.
	documentFields = []string{"content", "text", "page_content", "document", "kwargs", "node"}
	queryFields    = []string{"query", "input", "question", "inputs", "kwargs"}
	// answerFields: LlamaIndex's EngineResponse keeps its answer in
	// message.content.
	answerFields = []string{"answer", "output", "result", "text", "content", "outputs", "message"}
)

// maxFields is the most fields a text finder looks for.
const maxFields = 7

// findText is the text of a JSON text: a string is itself, an object gives
// the text of the first of fields that holds one, looked for recursively.
// It returns the string token ("" when there is none), still encoded.
func findText(text string, fields []string) string {
	sc := newScanner(text)
	defer sc.done()
	raw, ok := sc.textIn(fields, 0)
	if !ok || !sc.end() {
		return ""
	}
	return raw
}

// findFirstArg is the text of the first positional argument in a JSON
// object that records a call as {"args": [...], "kwargs": {...}}: the
// argument itself when it is a string, else the text of the first of fields
// it holds. It returns the string token ("" when there is none), still
// encoded; a text that is not valid JSON as a whole has none.
func findFirstArg(text string, fields []string) string {
	sc := newScanner(text)
	defer sc.done()
	var args string
	if sc.peek() != '{' || !sc.open('{') {
		return ""
	}
	for first := true; sc.more('}', &first); {
		k, ok := sc.key()
		if !ok {
			return ""
		}
		if !keyIs(k, "args") {
			if !sc.skip() {
				return ""
			}
			continue
		}
		v, ok := sc.span()
		if !ok {
			return ""
		}
		args = v // a repeated key counts by its last value
	}
	if sc.bad || !sc.end() || !strings.HasPrefix(args, "[") {
		return ""
	}
	it := newArrayItems(args)
	defer it.done()
	if !it.next() {
		return ""
	}
	raw, _ := it.sc.textIn(fields, 1)
	return raw
}

// textIn reads the value at the position and returns the token of the
// text it holds, "" if none. A repeated key counts by its last value.
func (sc *scanner) textIn(fields []string, depth int) (raw string, ok bool) {
	switch sc.peek() {
	case '"':
		return sc.str()
	case '{':
		if depth >= maxTextDepth {
			return "", sc.skip()
		}
	default:
		return "", sc.skip()
	}
	var found [maxFields]string
	if !sc.open('{') {
		return "", false
	}
	for first := true; sc.more('}', &first); {
		k, ok := sc.key()
		if !ok {
			return "", false
		}
		idx := -1
		for j, name := range fields {
			if keyIs(k, name) {
				idx = j
				break
			}
		}
		if idx < 0 {
			if !sc.skip() {
				return "", false
			}
			continue
		}
		if found[idx], ok = sc.textIn(fields, depth+1); !ok {
			return "", false
		}
	}
	if sc.bad {
		return "", false
	}
	for _, t := range found[:len(fields)] {
		if nonEmpty(t) {
			return t, true
		}
	}
	return "", true
}

// messagesText joins the text of gen_ai.output.messages, which encoding/json
// used to decode into
//
//	[]struct{ Content json.RawMessage; Parts []struct{ Type, Content string } }
//
// so the same rules hold: field names match case-insensitively, a repeated
// field counts by its last value (a null string leaves the one before), and
// a value of the wrong type anywhere makes the whole text unreadable. The
// text of a message is its parts of type "text", or its content when it has
// no parts. (Where a message repeats "parts", encoding/json merged the
// arrays element by element; the last array is taken as it stands.)
func messagesText(text string) string {
	sc := newScanner(text)
	defer sc.done()
	var texts []string
	if !sc.open('[') { // null, or not an array: no text
		return ""
	}
	typeErr := false
	for first := true; sc.more(']', &first); {
		switch sc.peek() {
		case '{':
		case 'n':
			if !sc.skip() {
				return ""
			}
			continue
		default:
			typeErr = true
			if !sc.skip() {
				return ""
			}
			continue
		}
		content, parts, nparts, ok := sc.message(&typeErr)
		if !ok {
			return ""
		}
		if nparts == 0 {
			if strings.HasPrefix(content, `"`) && nonEmpty(content) {
				texts = append(texts, decodeString(content))
			}
			continue
		}
		texts = appendPartTexts(texts, parts)
	}
	if sc.bad || !sc.end() || typeErr {
		return ""
	}
	return strings.Join(texts, "\n")
}

// message reads one message object: its last content value, and its last
// parts array (checked) with the number of its elements.
func (sc *scanner) message(typeErr *bool) (content, parts string, nparts int, ok bool) {
	if !sc.open('{') {
		return "", "", 0, false
	}
	for first := true; sc.more('}', &first); {
		k, ok := sc.key()
		if !ok {
			return "", "", 0, false
		}
		switch {
		case keyFolds(k, "content"):
			if content, ok = sc.span(); !ok {
				return "", "", 0, false
			}
		case keyFolds(k, "parts"):
			switch sc.peek() {
			case '[':
				sc.ws()
				start := sc.i
				if nparts, ok = sc.parts(typeErr); !ok {
					return "", "", 0, false
				}
				parts = sc.s[start:sc.i]
			case 'n':
				parts, nparts = "", 0
				ok = sc.skip()
			default:
				*typeErr = true
				ok = sc.skip()
			}
			if !ok {
				return "", "", 0, false
			}
		default:
			if !sc.skip() {
				return "", "", 0, false
			}
		}
	}
	return content, parts, nparts, !sc.bad
}

// parts checks a parts array: each part null or an object whose type and
// content are strings or null.
func (sc *scanner) parts(typeErr *bool) (n int, ok bool) {
	if !sc.open('[') {
		return 0, false
	}
	for first := true; sc.more(']', &first); {
		n++
		switch sc.peek() {
		case '{':
		case 'n':
			if !sc.skip() {
				return 0, false
			}
			continue
		default:
			*typeErr = true
			if !sc.skip() {
				return 0, false
			}
			continue
		}
		if !sc.open('{') {
			return 0, false
		}
		for first := true; sc.more('}', &first); {
			k, ok := sc.key()
			if !ok {
				return 0, false
			}
			if keyFolds(k, "type") || keyFolds(k, "content") {
				if c := sc.peek(); c != '"' && c != 'n' {
					*typeErr = true
				}
			}
			if !sc.skip() {
				return 0, false
			}
		}
		if sc.bad {
			return 0, false
		}
	}
	return n, !sc.bad
}

// appendPartTexts reads a parts array that parts has checked (a second
// pass over it) and appends the content of its text parts.
func appendPartTexts(texts []string, parts string) []string {
	it := newArrayItems(parts)
	defer it.done()
	for it.next() {
		sc := &it.sc
		if sc.peek() != '{' {
			sc.skip()
			continue
		}
		var typ, content string
		if !sc.open('{') {
			break
		}
		for first := true; sc.more('}', &first); {
			k, _ := sc.key()
			isType, isContent := keyFolds(k, "type"), keyFolds(k, "content")
			v, _ := sc.span()
			if v[0] != '"' {
				continue // null leaves a string as it was
			}
			if isType {
				typ = v
			} else if isContent {
				content = v
			}
		}
		if typ != "" && keyIs(typ, "text") && nonEmpty(content) {
			texts = append(texts, decodeString(content))
		}
	}
	return texts
}
