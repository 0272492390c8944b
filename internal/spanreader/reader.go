// Package spanreader recognises retrieval spans in the dialects of the
// instrumentation libraries that emit them, and reads their query, answer,
// reference and ranked chunks.
//
// Recognise runs on every span that passes through the processor, so it is a
// single pass over the span's attributes with no allocation. Read runs only
// on the few spans that are sampled, and bounds its work by the limits it is
// given whatever the span holds. JSON in attributes is read in one pass,
// linear in its size, whichever of the two reads it.
//
// Each dialect is a file (project.go, genai.go, openinference.go,
// openllmetry.go, springai.go) implementing the dialect interface of
// registry.go, which lists them in the order of docs/SOURCES.md's dialect table
// and holds the pass over a span's attributes. jsonscan.go is the JSON scanner, jsonfind.go what the
// dialects look for with it.
package spanreader

import (
	"errors"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// Dialect names the convention a retrieval span was recognised by.
type Dialect string

const (
	// DialectAttributes is a span carrying the chunks attribute named in the
	// processor's attributes: config.
	DialectAttributes Dialect = "attributes"
	// DialectProject is the project's own rag.* keys.
	DialectProject Dialect = "project"
	// DialectGenAI is the OpenTelemetry GenAI semantic conventions.
	DialectGenAI Dialect = "gen_ai"
	// DialectOpenInference is Arize OpenInference.
	DialectOpenInference Dialect = "openinference"
	// DialectOpenLLMetry is Traceloop OpenLLMetry.
	DialectOpenLLMetry Dialect = "openllmetry"
	// DialectSpringAI is Spring AI's vector store observations.
	DialectSpringAI Dialect = "spring_ai"
)

// keyScoreStatus is written by the processor on every span it selects. A
// span that carries it was handled by a collector upstream (an agent in
// front of a gateway) and is not judged again.
const keyScoreStatus = ragattr.Status

// Keys are attribute names configured by the user that override what the
// dialect readers find. Empty names are not used.
type Keys struct {
	Query, Answer, Reference, Chunks string
}

// Limits bound the work and memory of Read.
type Limits struct {
	// TopK keeps only the first TopK chunks; 0 keeps all.
	TopK int
	// MaxChunks is the most chunks (after TopK) a retrieval may have.
	MaxChunks int
	// MaxBytes is the most bytes of query, answer, reference and chunk text
	// one retrieval may hold.
	MaxBytes int
}

// ErrTooLarge means a span holds more chunks or bytes than Limits allow.
var ErrTooLarge = errors.New("retrieval exceeds limits")

// ErrNoChunks means a candidate span has no chunk that can be read: the
// attribute is missing, empty, of the wrong type, or malformed JSON.
var ErrNoChunks = errors.New("no readable chunks")

// Retrieval is what Read found on a span.
type Retrieval struct {
	Query     string
	Answer    string
	Reference string
	// Chunks are in rank order, already cut to TopK.
	Chunks []string
	// RerankInput is a rerank span's input ranking, where the span carries
	// it: the reranker's input documents in their order, cut to the first
	// len(Chunks) (the depth the reranker returned), so that the output is
	// compared with the input at the same depth. Nil otherwise, and when the
	// input has fewer documents than the output or does not fit in
	// MaxBytes beside the rest: the output is scored all the same.
	RerankInput []string
}

// Bytes is the text the retrieval holds.
func (r Retrieval) Bytes() int64 {
	n := len(r.Query) + len(r.Answer) + len(r.Reference)
	for _, c := range r.Chunks {
		n += len(c)
	}
	for _, c := range r.RerankInput {
		n += len(c)
	}
	return int64(n)
}

// Reader recognises and reads retrieval spans. It is immutable and safe for
// concurrent use.
type Reader struct {
	keys   Keys
	limits Limits
	table  keyTable
}

// New returns a Reader for the given override keys and limits.
func New(keys Keys, limits Limits) *Reader {
	return &Reader{keys: keys, limits: limits, table: newKeyTable(keys)}
}

// Recognise reports whether span is a retrieval span, and by which dialect.
// Dialects are tried in docs/SOURCES.md's order; a span carrying the configured
// chunks attribute is recognised by it before any dialect. A span already
// scored upstream is not recognised. It is one pass over the attributes
// (see observe) and allocates nothing.
func (r *Reader) Recognise(span ptrace.Span) (Dialect, bool) {
	var obs observation
	r.observe(span, &obs)
	switch {
	case obs.scored:
		return "", false
	case obs.chunks:
		// Which dialect the span is in matters only to Read.
		return DialectAttributes, true
	}
	if obs.present == 0 && (!r.table.watchesEvents || span.Events().Len() == 0) {
		// Nothing any dialect watches: most spans end here, without the
		// call to dialectOf.
		return "", false
	}
	if d := r.dialectOf(span, &obs); d >= 0 {
		return dialects[d].id(), true
	}
	return "", false
}

// Read extracts the retrieval of a span that Recognise accepted as dialect d.
// It returns ErrTooLarge when the span exceeds the limits and ErrNoChunks
// when no chunk can be read; the Retrieval then has no chunks (its query and
// answer may still be set).
func (r *Reader) Read(span ptrace.Span, d Dialect) (Retrieval, error) {
	attrs := span.Attributes()
	var ret Retrieval
	var err error
	dl := dialectIndex(d)
	if d == DialectAttributes {
		// The configured chunks attribute replaces the dialect's chunks
		// only; its query, answer and reference still count.
		dl = r.dialectBeside(span)
		budget := r.budget()
		ret.Chunks, err = r.chunksFromValue(attrs, r.keys.Chunks, &budget)
	}
	wantChunks := ret.Chunks == nil && err == nil
	switch {
	case dl >= 0:
		got, derr := dialects[dl].read(r, span, wantChunks)
		ret.Query, ret.Answer, ret.Reference = got.Query, got.Answer, got.Reference
		if wantChunks {
			ret.Chunks, ret.RerankInput, err = got.Chunks, got.RerankInput, derr
		}
	case wantChunks:
		err = ErrNoChunks
	}
	if r.keys.Query != "" {
		if v := str(attrs, r.keys.Query); v != "" {
			ret.Query = v
		}
	}
	if r.keys.Answer != "" {
		if v := str(attrs, r.keys.Answer); v != "" {
			ret.Answer = v
		}
	}
	if r.keys.Reference != "" {
		if v := str(attrs, r.keys.Reference); v != "" {
			ret.Reference = v
		}
	}
	// White space alone is no text: a reference of it would be judged
	// against and record a meaningless score, where the next reference
	// source, or no_reference, is right (as for blank chunks below).
	ret.Query, ret.Answer, ret.Reference = textOrNone(ret.Query), textOrNone(ret.Answer), textOrNone(ret.Reference)
	if err == nil && allBlank(ret.Chunks) {
		// Documents without text (GenAI makes content opt-in) cannot be
		// judged; judging them as empty would record a score of 0.
		err = ErrNoChunks
	}
	if err == nil && ret.Bytes() > int64(r.limits.MaxBytes) && ret.RerankInput != nil {
		// The input ranking is optional: the output is scored without it.
		ret.RerankInput = nil
	}
	if err == nil && ret.Bytes() > int64(r.limits.MaxBytes) {
		err = ErrTooLarge
	}
	if err != nil {
		ret.Chunks, ret.RerankInput = nil, nil
	}
	return ret, err
}

// dialectBeside is the dialect of a span that carries the configured
// chunks attribute; on a span of no dialect, the project's rag.* keys are
// read.
func (r *Reader) dialectBeside(span ptrace.Span) int {
	var obs observation
	r.observe(span, &obs)
	if d := r.dialectOf(span, &obs); d >= 0 && !obs.scored {
		return d
	}
	return dialectIndex(DialectProject)
}

// str returns a string attribute, or "" when it is missing or not a string:
// a number where text is expected is not a query or an answer.
func str(attrs pcommon.Map, key string) string {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return ""
	}
	return v.Str()
}

// byteBudget counts the bytes a reading of chunks has taken so far, so that
// it stops at the first chunk past the limit.
type byteBudget struct{ left int }

func (r *Reader) budget() byteBudget { return byteBudget{left: r.limits.MaxBytes} }

func (b *byteBudget) take(n int) bool {
	b.left -= n
	return b.left >= 0
}

// keep is how many chunks of n to read: TopK of them when set. It reports
// ErrTooLarge when that is more than MaxChunks.
func (r *Reader) keep(n int) (int, error) {
	if r.limits.TopK > 0 && n > r.limits.TopK {
		n = r.limits.TopK
	}
	if n > r.limits.MaxChunks {
		return 0, ErrTooLarge
	}
	if n == 0 {
		return 0, ErrNoChunks
	}
	return n, nil
}

// textOrNone is s, or "" when s is white space only.
func textOrNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

// nonBlank reports whether s has text other than white space.
func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

func allBlank(chunks []string) bool {
	for _, c := range chunks {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
