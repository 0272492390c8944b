package spanreader

import (
	"math/bits"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Traceloop OpenLLMetry (SPEC §3): vector-store instrumentations record
// db.query.result events; framework instrumentations put a retriever's
// documents in traceloop.entity.output as JSON, LangChain-style
// ({"documents": [{"page_content": "…"}]} and its variants). A model call
// (llm.request.type) carries its answer in traceloop.entity.output.
const (
	keyTraceloopInput     = "traceloop.entity.input"
	keyTraceloopOutput    = "traceloop.entity.output"
	keyLLMRequestType     = "llm.request.type"
	keyDBQueryText        = "db.query.text"
	eventDBQueryResult    = "db.query.result"
	keyDBQueryResultDoc   = "db.query.result.document"
	traceloopDocumentsKey = "page_content"
)

// Watched attributes of openLLMetryDialect, by index; its one watched
// event is db.query.result.
const (
	ollmOutput = iota
	ollmRequestType
)

type openLLMetryDialect struct{}

func (openLLMetryDialect) id() Dialect { return DialectOpenLLMetry }

func (openLLMetryDialect) watches() watchList {
	return watchList{
		attributes: []string{keyTraceloopOutput, keyLLMRequestType},
		events:     []string{eventDBQueryResult},
	}
}

// classify: db.query.result events make a retrieval; llm.request.type a
// model call, whose entity output is its answer. Otherwise an entity output
// that looks like JSON may hold documents: confirm looks into it.
func (openLLMetryDialect) classify(r *Reader, w *watched) class {
	var c class
	if w.event(0) {
		c |= classRetrieval
	}
	if _, ok := w.value(ollmRequestType); ok {
		c |= classModelCall
	}
	if c == 0 && r.mayHoldDocuments(w.str(ollmOutput)) {
		c = classMaybe
	}
	return c
}

func (openLLMetryDialect) confirm(r *Reader, w watched) bool {
	return r.holdsDocuments(w.str(ollmOutput))
}

func (openLLMetryDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	ret := Retrieval{Query: r.traceloopQuery(span.Attributes())}
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
// that holds documents Read can take chunks from. Every span with an entity
// output that no other dialect claims is looked at, so as much as possible
// is decided before the text is read:
//
//   - outputs of model calls, in any dialect, are answers and are not
//     looked at (classify, dialectOf);
//   - only JSON can hold documents: text that does not start with [ or {
//     is rejected on its first byte, JSON that does not end with the
//     bracket it opens with (SDKs truncate long attributes) on its last
//     (mayHoldDocuments);
//   - documents have a page_content: the text is searched for one at
//     memory speed (mentionsDocuments), and parsed, once, only if it has
//     one (holdsDocuments).
//
// None of these steps can miss a retrieval that Read would take chunks
// from, whatever comes first in the text. Looking only at a window at the
// start of the text would have made long outputs cheaper, but would miss
// documents that come after long metadata or other keys: the cost of
// searching the whole text is paid instead, and only by JSON outputs of
// spans that are not model calls. An output too large to parse within the
// byte limit is taken as a retrieval when it mentions page_content (it will
// pass with status too_large).

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
	return len(t) > shortOutput || mentionsDocuments(t)
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
	if !ok || !mentionsDocuments(t) {
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
// strings.Contains would (whose strings.Index, bytealg.IndexString, looks
// at one place a step on texts this long, and is several times slower).
// Where the CPU allows, texts of avx2MinLen bytes or more (one block of
// the vector search) are searched 32 places at once (mentionsDocumentsAVX2:
// on amd64, see mentions_amd64.go), as fast as strings.IndexByte reads
// prose, JSON of prose or LangChain's JSON. Otherwise, and on shorter
// texts, the search jumps from one anchor byte of page_content to
// the next with strings.IndexByte, a vector instruction that reads tens of
// bytes a cycle, and compares the twelve bytes around each with two 8-byte
// loads. Each jump costs a call, so the anchor is a byte rare in the text:
// '_' first, rare in prose; when two jumps in a row land less than
// denseAnchor bytes on (as in LangChain's serialisation, whose keys are
// full of underscores, or in a run of underscores) the next of
// documentAnchors takes over, in turn. When every anchor has been found
// dense in turn, the next denseBlock bytes are read 8 places at a time for
// all four anchors at once (a few cycles per 8 bytes whatever they are),
// and the search goes back to '_'. The strategy changes only the speed:
// each step finds the first place at or after i where page_content could
// start, and no match can start before it.
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
// a JSON string), else db.query.text.
func (r *Reader) traceloopQuery(attrs pcommon.Map) string {
	if in := str(attrs, keyTraceloopInput); in != "" && len(in) <= r.limits.MaxBytes {
		if q := textOf(findText(strings.TrimSpace(in), queryFields)); q != "" {
			return q
		}
	}
	return str(attrs, keyDBQueryText)
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
