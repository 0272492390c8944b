package spanreader

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Traceloop OpenLLMetry (docs/SOURCES.md's dialect table). Vector-store
// instrumentations record a query's results as span events: Chroma's (and
// Milvus's, Marqo's, Pinecone's Python ones) db.query.result, the document's
// text in db.query.result.document (Python: one event per result; JS: one
// per query, its documents a JSON array); Pinecone's JavaScript one a
// pinecone.query.result.{i}.metadata event per match, the record's metadata
// as attributes, the text in text (as LangChain's and LlamaIndex's Pinecone
// stores keep it); Qdrant's JavaScript one the payload of each match as
// JSON in the span's db.vector.query.result.{i}.metadata (the text under
// content in LangChain.js's QdrantVectorStore layout, or text). Result
// events without text (ids, scores, vectors, other fields) make no
// retrieval. Framework instrumentations put a retriever's
// documents in traceloop.entity.output as JSON, LangChain-style
// ({"documents": [{"page_content": "…"}]} and its variants) or
// LlamaIndex.TS's ([{"node": {"text": "…"}, "score": …}]). A model call
// (llm.request.type) carries its answer in traceloop.entity.output, but a
// rerank request (Cohere's, llm.request.type rerank) is a retrieval: its
// output ranking's texts are gen_ai.completion.{i}.content (with
// returnDocuments), its query gen_ai.prompt.0.user, and its input
// ranking's texts documents.{i}.index (the name notwithstanding: the
// instrumentation records each input document's text there).
const (
	keyTraceloopInput    = "traceloop.entity.input"
	keyTraceloopOutput   = "traceloop.entity.output"
	keyLLMRequestType    = "llm.request.type"
	keyDBQueryText       = "db.query.text"
	eventDBQueryResult   = "db.query.result"
	keyDBQueryResultDoc  = "db.query.result.document"
	eventPineconeResult  = "pinecone.query.result"
	keyRerankQuery       = "gen_ai.prompt.0.user"
	keyCompletionPrefix  = "gen_ai.completion."
	keyContentSuffix     = ".content"
	requestTypeRerank    = "rerank"
	keyCohereInputPrefix = "documents."
	keyCohereInputSuffix = ".index"
	// keyQdrantFirstPayload is the first match's payload: watching it
	// exactly keeps recognition one lookup in the key table; the other
	// matches' payloads are read with it.
	keyQdrantFirstPayload  = keyQdrantResultPrefix + "0" + keyQdrantPayloadSuffix
	keyQdrantResultPrefix  = "db.vector.query.result."
	keyQdrantPayloadSuffix = ".metadata"
	traceloopDocumentsKey  = "page_content"
)

// pineconeTextFields are the metadata fields of a Pinecone record, and of a
// Qdrant point's payload, that hold its text, in order of preference: text
// (LangChain's and LlamaIndex's default), chunk_text (Pinecone's
// integrated-embedding examples), content (LangChain.js's Qdrant store),
// page_content.
var pineconeTextFields = [...]string{"text", "chunk_text", "content", "page_content"}

// Watched attributes of openLLMetryDialect, by index.
const (
	ollmOutput = iota
	ollmRequestType
	ollmQdrantPayload
)

// Watched events of openLLMetryDialect, by index.
const (
	ollmQueryResult = iota
	ollmPineconeResult
)

type openLLMetryDialect struct{}

func (openLLMetryDialect) id() Dialect { return DialectOpenLLMetry }

func (openLLMetryDialect) watches() watchList {
	return watchList{
		attributes: []string{keyTraceloopOutput, keyLLMRequestType, keyQdrantFirstPayload},
		events:     []string{eventDBQueryResult, eventPineconeResult},
	}
}

// classify: llm.request.type makes a model call, whose entity output is its
// answer. Query result events and Qdrant payloads may hold documents' text,
// and an entity output that looks like JSON may hold documents: confirm
// looks into them.
func (openLLMetryDialect) classify(r *Reader, w *watched) class {
	if _, ok := w.value(ollmRequestType); ok {
		if w.str(ollmRequestType) == requestTypeRerank {
			return classMaybe
		}
		return classModelCall
	}
	_, qdrant := w.value(ollmQdrantPayload)
	if qdrant || w.event(ollmQueryResult) || w.event(ollmPineconeResult) || r.mayHoldDocuments(w.str(ollmOutput)) {
		return classMaybe
	}
	return 0
}

func (openLLMetryDialect) confirm(r *Reader, span ptrace.Span, w watched) bool {
	if w.str(ollmRequestType) == requestTypeRerank {
		return rerankedHaveText(span.Attributes())
	}
	_, qdrant := w.value(ollmQdrantPayload)
	return (w.event(ollmQueryResult) && (r.queryResultsHaveText(span.Events()) || queryResultsHaveNonText(span.Events()))) ||
		(w.event(ollmPineconeResult) && (pineconeResultsHaveText(span.Events()) || pineconeResultsHaveNonText(span.Events()))) ||
		(qdrant && (r.qdrantResultsHaveText(span.Attributes()) || qdrantResultsHaveNonText(span.Attributes()))) ||
		r.holdsDocuments(w.str(ollmOutput))
}

// A result whose document field holds numbers or bools instead of text (the
// wrong type of docs/SOURCES.md's "Retrieval dialects") is a retrieval all the same: it is
// read as no_chunks, so that it shows in the funnel and never in the
// scores, rather than passing as if it were no retrieval. A result without
// the field at all (ids, scores, vectors) stays no retrieval.

// queryResultsHaveNonText reports whether some db.query.result event's
// document holds values that are not text.
func queryResultsHaveNonText(events ptrace.SpanEventSlice) bool {
	for i := 0; i < events.Len(); i++ {
		if e := events.At(i); e.Name() == eventDBQueryResult {
			if v, ok := e.Attributes().Get(keyDBQueryResultDoc); ok && holdsNonText(v) {
				return true
			}
		}
	}
	return false
}

// pineconeResultsHaveNonText reports whether some match's metadata has a
// text field (pineconeTextFields) that is not a string.
func pineconeResultsHaveNonText(events ptrace.SpanEventSlice) bool {
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if _, ok := pineconeMatch(e.Name()); !ok {
			continue
		}
		for _, f := range pineconeTextFields {
			if v, ok := e.Attributes().Get(f); ok && v.Type() != pcommon.ValueTypeStr && holdsNonText(v) {
				return true
			}
		}
	}
	return false
}

// qdrantResultsHaveNonText reports whether some match's payload is a value
// that is not text (the instrumentation writes each payload as a JSON
// string).
func qdrantResultsHaveNonText(attrs pcommon.Map) bool {
	for k, v := range attrs.All() {
		if _, ok := rankIn(k, keyQdrantResultPrefix, keyQdrantPayloadSuffix); ok && v.Type() != pcommon.ValueTypeStr && holdsNonText(v) {
			return true
		}
	}
	return false
}

// holdsNonText reports whether a value that holds no text holds something
// else: a number or a bool, an array or map with such a value, or a string
// that is a JSON array or object with more than nulls. Blank strings, empty
// values and nulls are nothing: Chroma's JavaScript client sends [null,null]
// when a query does not include the documents.
func holdsNonText(v pcommon.Value) bool {
	switch v.Type() {
	case pcommon.ValueTypeInt, pcommon.ValueTypeDouble, pcommon.ValueTypeBool:
		return true
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			if holdsNonText(e) {
				return true
			}
		}
	case pcommon.ValueTypeMap:
		for _, e := range v.Map().All() {
			if holdsNonText(e) {
				return true
			}
		}
	case pcommon.ValueTypeStr:
		t, ok := jsonContainer(v.Str())
		return ok && !onlyNulls(t)
	}
	return false
}

// onlyNulls reports whether a JSON text is nothing but brackets, commas,
// white space and nulls.
func onlyNulls(t string) bool {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '[', ']', '{', '}', ',', ' ', '\t', '\n', '\r':
		case 'n':
			if !strings.HasPrefix(t[i:], "null") {
				return false
			}
			i += len("null") - 1
		default:
			return false
		}
	}
	return true
}

func (openLLMetryDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	attrs := span.Attributes()
	if str(attrs, keyLLMRequestType) == requestTypeRerank {
		ret := Retrieval{Query: str(attrs, keyRerankQuery)}
		var err error
		if wantChunks {
			budget := r.budget()
			ret.Chunks, err = r.rerankedChunks(attrs, &budget)
			if err == nil {
				ret.RerankInput = rankedInput(attrs, keyCohereInputPrefix, keyCohereInputSuffix, valueText, len(ret.Chunks), &budget)
			}
		}
		return ret, err
	}
	ret := Retrieval{Query: r.traceloopQuery(attrs)}
	var err error
	if wantChunks {
		budget := r.budget()
		ret.Chunks, err = r.openLLMetryChunks(span, &budget)
	}
	return ret, err
}

// answer is the text of a traceloop.entity.output: a JSON string, an
// object's answer-like field, or the raw value when it is not JSON.
func (openLLMetryDialect) answer(r *Reader, w watched) string {
	s := w.str(ollmOutput)
	t := strings.TrimSpace(s)
	if t == "" || len(t) > r.limits.MaxBytes {
		return ""
	}
	if t[0] != '{' && t[0] != '"' {
		return s
	}
	return textOf(findText(t, answerFields))
}

// An OpenLLMetry span is recognised by its traceloop.entity.output when
// that holds documents Read can take chunks from. Every unclaimed entity
// output is looked at, so the cheap tests come first: model calls are
// answers (classify, dialectOf); only JSON that ends with the bracket it
// opens with can hold documents (mayHoldDocuments); and the whole text is
// searched for page_content before it is parsed, once (mentionsDocuments,
// holdsDocuments). None of these can miss a retrieval Read would take, where
// looking at a prefix only would miss documents after long metadata.

// mayHoldDocuments is the test of classify: it looks at two bytes, and
// searches outputs no longer than shortOutput for page_content (a bounded
// cost, which spares the many short outputs a call to confirm).
func (r *Reader) mayHoldDocuments(s string) bool {
	t, ok := jsonContainer(s)
	switch {
	case !ok:
		return false
	case len(t) > r.limits.MaxBytes:
		return true
	case t[len(t)-1] != t[0]+2: // '[' + 2 is ']' and '{' + 2 is '}'
		return false
	}
	return len(t) > shortOutput || mentionsDocuments(t) || (t[0] == '[' && startsNodeList(t))
}

// startsNodeList reports whether a JSON text starts as LlamaIndex.TS
// serialises a retriever's result, an array of NodeWithScore whose first
// key is node: [{"node": …. Its documents mention no page_content.
func startsNodeList(t string) bool {
	i := 0
	for _, want := range [...]string{"[", "{", `"node"`, ":"} {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
			i++
		}
		if !strings.HasPrefix(t[i:], want) {
			return false
		}
		i += len(want)
	}
	return true
}

// jsonContainer is s without the white space around it, when what is left
// starts like a JSON array or object. strings.TrimSpace (a call, which
// scans both ends) runs only when an end of s may be white space.
func jsonContainer(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if c := s[0]; c != '[' && c != '{' {
		if c > ' ' && c < utf8.RuneSelf {
			return "", false // text, whatever follows
		}
		s = strings.TrimSpace(s)
		return s, s != "" && (s[0] == '[' || s[0] == '{')
	}
	if c := s[len(s)-1]; c <= ' ' || c >= utf8.RuneSelf {
		s = strings.TrimSpace(s)
	}
	return s, true
}

// shortOutput is the longest output classify searches.
const shortOutput = 256

// holdsDocuments is the test of confirm, on a text mayHoldDocuments passed.
func (r *Reader) holdsDocuments(s string) bool {
	t, ok := jsonContainer(s)
	if !ok || (!mentionsDocuments(t) && !startsNodeList(t)) {
		return false
	}
	if len(t) > r.limits.MaxBytes {
		return true
	}
	docs, ok := findDocuments(t)
	if !ok {
		return false
	}
	it := newArrayItems(docs)
	defer it.done()
	for it.next() {
		raw, ok := it.sc.textIn(documentFields, 0)
		if !ok {
			return false
		}
		if nonEmpty(raw) {
			return true
		}
	}
	return false
}

// mentionsDocuments reports whether s contains "page_content", exactly as
// strings.Contains would, several times faster on long texts: with AVX2,
// 32 places at once (mentions_amd64.go); otherwise by jumping with
// strings.IndexByte between anchor bytes of the key, switching to the next
// of documentAnchors when one turns out dense in the text (LangChain's keys
// are full of '_'), and reading denseBlock bytes 8 at a time when all are.
// The strategy changes only the speed: each step finds the first place at
// or after i where page_content could start.
func mentionsDocuments(s string) bool {
	if useAVX2 && len(s) >= avx2MinLen {
		return mentionsDocumentsAVX2(s)
	}
	const n = len(traceloopDocumentsKey)
	a, dense, switches := 0, 0, 0
	for i := 0; i+n <= len(s); {
		if switches == len(documentAnchors) {
			var found bool
			if i, found = mentionsDocumentsBlock(s, i); found {
				return true
			}
			a, dense, switches = 0, 0, 0
			continue
		}
		off := documentAnchors[a]
		j := strings.IndexByte(s[i+off:len(s)-n+1+off], traceloopDocumentsKey[off])
		if j < 0 {
			return false
		}
		i += j // page_content's anchor byte is at i+off
		if load64(s, i) == documentsWords[0] && load64(s, i+n-8) == documentsWords[1] {
			return true
		}
		i++
		if j >= denseAnchor {
			dense, switches = 0, 0
		} else if dense++; dense == 2 {
			a, dense, switches = (a+1)%len(documentAnchors), 0, switches+1
		}
	}
	return false
}

// mentionsDocumentsBlock looks for page_content starting in the denseBlock
// bytes of s from i, at most, and returns where it stopped: 8 places at a
// time, each an AND of the places where 8 bytes loaded at the offset of an
// anchor equal it (exactly: see zeroBytes). It stops short of the end of
// s, which mentionsDocuments goes on with.
func mentionsDocumentsBlock(s string, i int) (int, bool) {
	const n = len(traceloopDocumentsKey)
	end := min(i+denseBlock, len(s)-n+1-8)
	for ; i < end; i += 8 {
		m := zeroBytes(load64(s, i)^('p'*lsb8)) & zeroBytes(load64(s, i+2)^('g'*lsb8)) &
			zeroBytes(load64(s, i+4)^('_'*lsb8)) & zeroBytes(load64(s, i+5)^('c'*lsb8))
		for ; m != 0; m &= m - 1 {
			p := i + bits.TrailingZeros64(m)/8
			if load64(s, p) == documentsWords[0] && load64(s, p+n-8) == documentsWords[1] {
				return p, true
			}
		}
	}
	return max(i, end), false
}

const lsb8, msb8 = 0x0101010101010101, 0x8080808080808080

// zeroBytes has the high bit of each byte of x that is zero set, and no
// other bit (no borrow crosses bytes, unlike the shorter (x-lsb8)&^x&msb8).
func zeroBytes(x uint64) uint64 {
	t := (x &^ msb8) + (msb8 - lsb8)
	return ^(t | x) & msb8
}

// documentAnchors are the offsets in page_content of the bytes
// mentionsDocuments jumps between, in the order it tries them: '_', 'g',
// 'p', 'c'.
var documentAnchors = [...]int{4, 2, 0, 5}

// denseAnchor is the jump (in bytes) below which an anchor is taken to be
// common in the text; denseBlock how far the search reads 8 places at a
// time when every anchor is.
const (
	denseAnchor = 32
	denseBlock  = 512
)

// documentsWords are the first and last 8 bytes of page_content.
var documentsWords = [2]uint64{
	load64(traceloopDocumentsKey, 0),
	load64(traceloopDocumentsKey, len(traceloopDocumentsKey)-8),
}

// traceloopQuery is the query of an OpenLLMetry span: the query field of
// traceloop.entity.input (a JSON object, possibly under inputs or kwargs, or
// a JSON string), or its first positional argument (LlamaIndex.TS records
// {"args": ["…"], "kwargs": {}}), else db.query.text.
func (r *Reader) traceloopQuery(attrs pcommon.Map) string {
	if in := str(attrs, keyTraceloopInput); in != "" && len(in) <= r.limits.MaxBytes {
		in = strings.TrimSpace(in)
		if q := textOf(findText(in, queryFields)); q != "" {
			return q
		}
		if q := textOf(findFirstArg(in, queryFields)); q != "" {
			return q
		}
	}
	return str(attrs, keyDBQueryText)
}

// openLLMetryChunks reads the documents of query result events, in order,
// when they hold text; else the documents of traceloop.entity.output.
func (r *Reader) openLLMetryChunks(span ptrace.Span, budget *byteBudget) ([]string, error) {
	events := span.Events()
	switch {
	case r.queryResultsHaveText(events):
		return r.queryResultChunks(events, budget)
	case pineconeResultsHaveText(events):
		return r.pineconeChunks(events, budget)
	case r.qdrantResultsHaveText(span.Attributes()):
		return r.qdrantChunks(span.Attributes(), budget)
	}
	v, ok := span.Attributes().Get(keyTraceloopOutput)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return nil, ErrNoChunks
	}
	return r.chunksFromString(v.Str(), budget)
}

// queryResultsHaveText reports whether some db.query.result event holds a
// document's text.
func (r *Reader) queryResultsHaveText(events ptrace.SpanEventSlice) bool {
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if e.Name() != eventDBQueryResult {
			continue
		}
		v, ok := e.Attributes().Get(keyDBQueryResultDoc)
		if !ok {
			continue
		}
		if v.Type() == pcommon.ValueTypeStr && len(v.Str()) > r.limits.MaxBytes {
			return true // too large to look into: it passes as too_large
		}
		found := false
		r.eachResultDocument(v, func(text string) bool {
			found = nonBlank(text)
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// eachResultDocument calls f with the text of each document a
// db.query.result.document value holds, in order, until f returns false:
// the elements of an array, or of a JSON array of strings or documents (as
// the JavaScript instrumentation writes a query's documents), else the
// value itself. It reports false if f stopped it.
func (r *Reader) eachResultDocument(v pcommon.Value, f func(string) bool) bool {
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if !f(valueText(s.At(i))) {
				return false
			}
		}
		return true
	case pcommon.ValueTypeStr:
		if t, ok := jsonContainer(v.Str()); ok && t[0] == '[' && t[len(t)-1] == ']' {
			if docs, ok := findDocuments(t); ok {
				it := newArrayItems(docs)
				defer it.done()
				for it.next() {
					raw, ok := it.sc.textIn(documentFields, 0)
					if !ok {
						return true // cannot happen: findDocuments checked it
					}
					if !f(textOf(raw)) {
						return false
					}
				}
				return true
			}
		}
	}
	return f(valueText(v))
}

// queryResultChunks reads the documents of db.query.result events in order,
// a result without a document keeping its rank as an empty chunk. They are
// counted as they are read, up to one more than the limits allow.
func (r *Reader) queryResultChunks(events ptrace.SpanEventSlice, budget *byteBudget) ([]string, error) {
	limit := r.chunkLimit()
	var chunks []string
	tooLarge := false
	for i := 0; i < events.Len() && len(chunks) < limit && !tooLarge; i++ {
		e := events.At(i)
		if e.Name() != eventDBQueryResult {
			continue
		}
		v, ok := e.Attributes().Get(keyDBQueryResultDoc)
		if !ok {
			chunks = append(chunks, "")
			continue
		}
		if v.Type() == pcommon.ValueTypeStr && len(v.Str()) > budget.left {
			return nil, ErrTooLarge
		}
		r.eachResultDocument(v, func(text string) bool {
			if !budget.take(len(text)) {
				tooLarge = true
				return false
			}
			chunks = append(chunks, text)
			return len(chunks) < limit
		})
	}
	if tooLarge {
		return nil, ErrTooLarge
	}
	n, err := r.keep(len(chunks))
	if err != nil {
		return nil, err
	}
	return chunks[:n], nil
}

// chunkLimit is how many chunks a reading that counts as it reads needs:
// TopK, or one more than MaxChunks, which tells ErrTooLarge.
func (r *Reader) chunkLimit() int {
	limit := r.limits.MaxChunks
	if limit < math.MaxInt {
		limit++
	}
	if r.limits.TopK > 0 {
		limit = min(limit, r.limits.TopK)
	}
	return limit
}

// pineconeMatch is the rank of a pinecone.query.result.{i}.metadata event.
func pineconeMatch(name string) (int, bool) {
	return rankIn(name, eventPineconeResult+".", ".metadata")
}

// rankIn is the rank i of a name prefix{i}suffix, i written plainly (no
// sign, no leading zero).
func rankIn(name, prefix, suffix string) (int, bool) {
	if len(name) <= len(prefix)+len(suffix) || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	idx := name[len(prefix) : len(name)-len(suffix)]
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || strconv.Itoa(i) != idx {
		return 0, false
	}
	return i, true
}

// pineconeText is the text of a match's metadata: the first of
// pineconeTextFields that is a string.
func pineconeText(m pcommon.Map) string {
	for _, f := range pineconeTextFields {
		if v, ok := m.Get(f); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
	}
	return ""
}

func pineconeResultsHaveText(events ptrace.SpanEventSlice) bool {
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if _, ok := pineconeMatch(e.Name()); ok && nonBlank(pineconeText(e.Attributes())) {
			return true
		}
	}
	return false
}

// pineconeChunks reads the text of each match's metadata event in the
// order of the matches; a match without one (Pinecone returned no
// metadata) keeps its rank as an empty chunk. There are no more ranks than
// the span has events.
func (r *Reader) pineconeChunks(events ptrace.SpanEventSlice, budget *byteBudget) ([]string, error) {
	ranks := 0
	for i := 0; i < events.Len(); i++ {
		if m, ok := pineconeMatch(events.At(i).Name()); ok && m < events.Len() {
			ranks = max(ranks, m+1)
		}
	}
	n, err := r.keep(ranks)
	if err != nil {
		return nil, err
	}
	chunks := make([]string, n)
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if m, ok := pineconeMatch(e.Name()); ok && m < n && chunks[m] == "" {
			chunks[m] = pineconeText(e.Attributes())
			if !budget.take(len(chunks[m])) {
				return nil, ErrTooLarge
			}
		}
	}
	return chunks, nil
}

// qdrantText is the text of a Qdrant point's payload, a JSON object: the
// first of pineconeTextFields that holds a string. A payload that is not a
// string, or not JSON, has none.
func (r *Reader) qdrantText(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeStr {
		return ""
	}
	t, ok := jsonContainer(v.Str())
	if !ok || t[0] != '{' || len(t) > r.limits.MaxBytes {
		return ""
	}
	return textOf(findText(t, pineconeTextFields[:]))
}

func (r *Reader) qdrantResultsHaveText(attrs pcommon.Map) bool {
	for k, v := range attrs.All() {
		if _, ok := rankIn(k, keyQdrantResultPrefix, keyQdrantPayloadSuffix); ok {
			if v.Type() == pcommon.ValueTypeStr && len(v.Str()) > r.limits.MaxBytes {
				return true // too large to look into: it passes as too_large
			}
			if nonBlank(r.qdrantText(v)) {
				return true
			}
		}
	}
	return false
}

// qdrantChunks reads the text of each match's payload in the order of the
// matches; a match without a payload, or without text in it, keeps its
// rank as an empty chunk.
func (r *Reader) qdrantChunks(attrs pcommon.Map, budget *byteBudget) ([]string, error) {
	return r.rankedChunks(attrs, keyQdrantResultPrefix, keyQdrantPayloadSuffix, r.qdrantText, budget)
}

// rankedChunks reads the attributes prefix{i}suffix in the order of i, the
// text of each by text; a rank without one keeps its place, empty. There
// are no more ranks than the span has attributes.
func (r *Reader) rankedChunks(attrs pcommon.Map, prefix, suffix string, text func(pcommon.Value) string, budget *byteBudget) ([]string, error) {
	n, err := r.keep(rankCount(attrs, prefix, suffix))
	if err != nil {
		return nil, err
	}
	return readRanks(attrs, prefix, suffix, text, n, budget)
}

// rankedInput reads a reranker's input ranking from prefix{i}suffix, as
// rankedChunks does, cut to the first k ranks (the output's depth): nil
// when it has fewer than k ranks or does not fit in what is left of the
// budget, since then it cannot be compared with the output.
func rankedInput(attrs pcommon.Map, prefix, suffix string, text func(pcommon.Value) string, k int, budget *byteBudget) []string {
	if k == 0 || rankCount(attrs, prefix, suffix) < k {
		return nil
	}
	input, err := readRanks(attrs, prefix, suffix, text, k, budget)
	if err != nil {
		return nil
	}
	return input
}

// rankCount is one past the highest i of the attributes prefix{i}suffix,
// at most the number of attributes.
func rankCount(attrs pcommon.Map, prefix, suffix string) int {
	ranks := 0
	for k := range attrs.All() {
		if m, ok := rankIn(k, prefix, suffix); ok && m < attrs.Len() {
			ranks = max(ranks, m+1)
		}
	}
	return ranks
}

// readRanks reads the first n ranks of prefix{i}suffix. A value longer
// than the budget left is refused before text looks into it.
func readRanks(attrs pcommon.Map, prefix, suffix string, text func(pcommon.Value) string, n int, budget *byteBudget) ([]string, error) {
	chunks := make([]string, n)
	for k, v := range attrs.All() {
		if m, ok := rankIn(k, prefix, suffix); ok && m < n {
			if v.Type() == pcommon.ValueTypeStr && len(v.Str()) > budget.left {
				return nil, ErrTooLarge
			}
			chunks[m] = text(v)
			if !budget.take(len(chunks[m])) {
				return nil, ErrTooLarge
			}
		}
	}
	return chunks, nil
}

// rerankedHaveText reports whether a rerank span records the text of some
// document of its output ranking (Cohere's instrumentation does with
// returnDocuments; without it, or with content tracing off, only scores
// or input indices).
func rerankedHaveText(attrs pcommon.Map) bool {
	for k, v := range attrs.All() {
		if _, ok := rankIn(k, keyCompletionPrefix, keyContentSuffix); ok && v.Type() == pcommon.ValueTypeStr && nonBlank(v.Str()) {
			return true
		}
	}
	return false
}

// rerankedChunks reads gen_ai.completion.{i}.content in the order of i, the
// reranker's output ranking; a rank without text keeps its place, empty.
func (r *Reader) rerankedChunks(attrs pcommon.Map, budget *byteBudget) ([]string, error) {
	return r.rankedChunks(attrs, keyCompletionPrefix, keyContentSuffix, valueText, budget)
}
