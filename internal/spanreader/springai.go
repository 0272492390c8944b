package spanreader

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Spring AI's vector store observations (docs/SOURCES.md's dialect table): a
// span of spring.ai.kind vector_store whose query has its text in
// db.vector.query.content. Its documents are on the span only where the
// application asked for them, in the 1.0.0 milestones
// (spring.ai.vectorstore.observations.include-query-response): in the
// earlier ones as a db.vector.content.query.response event whose
// db.vector.query.content is a string array, in the later ones as the
// attribute db.vector.query.response.documents, the documents joined as
// ["…", "…"] without escaping. From 1.0.0-RC1 on they are only logged: such
// spans, like add and delete, carry no documents and are no retrieval.
const (
	keySpringAIKind      = "spring.ai.kind"
	keySpringAIDocuments = "db.vector.query.response.documents"
	keySpringAIQuery     = "db.vector.query.content"
	eventSpringAIResults = "db.vector.content.query.response"
	springAIVectorStore  = "vector_store"
)

// The one watched attribute of springAIDialect is
// db.vector.query.response.documents, its one watched event
// db.vector.content.query.response: spring.ai.kind is only looked at on
// spans that have one of them (confirm), since a key of its length is
// common.

type springAIDialect struct{}

func (springAIDialect) id() Dialect { return DialectSpringAI }

func (springAIDialect) watches() watchList {
	return watchList{
		attributes: []string{keySpringAIDocuments},
		events:     []string{eventSpringAIResults},
	}
}

// classify: a query's documents, of a vector store observation if confirm
// says so.
func (springAIDialect) classify(_ *Reader, w *watched) class {
	if _, ok := w.value(0); ok || w.event(0) {
		return classMaybe
	}
	return 0
}

func (springAIDialect) confirm(_ *Reader, span ptrace.Span, _ watched) bool {
	return str(span.Attributes(), keySpringAIKind) == springAIVectorStore
}

func (springAIDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	attrs := span.Attributes()
	ret := Retrieval{Query: str(attrs, keySpringAIQuery)}
	var err error
	if wantChunks {
		budget := r.budget()
		ret.Chunks, err = r.springAIChunks(span, &budget)
	}
	return ret, err
}

// answer: Spring AI's chat observations carry no answer by default.
func (springAIDialect) answer(*Reader, watched) string { return "" }

// springAIChunks reads db.vector.query.response.documents, else the first
// db.vector.content.query.response event.
func (r *Reader) springAIChunks(span ptrace.Span, budget *byteBudget) ([]string, error) {
	if _, ok := span.Attributes().Get(keySpringAIDocuments); ok {
		return r.springAIDocuments(span.Attributes(), keySpringAIDocuments, budget)
	}
	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		if e := events.At(i); e.Name() == eventSpringAIResults {
			return r.springAIDocuments(e.Attributes(), keySpringAIQuery, budget)
		}
	}
	return nil, ErrNoChunks
}

// springAIDocuments reads an array of documents, a JSON array, or Spring
// AI's own join of them, ["…", "…"], which escapes nothing: it is split at
// each `", "` (a document holding that sequence is read as two).
func (r *Reader) springAIDocuments(attrs pcommon.Map, key string, budget *byteBudget) ([]string, error) {
	chunks, err := r.chunksFromValue(attrs, key, budget)
	v, _ := attrs.Get(key)
	if err != ErrNoChunks || v.Type() != pcommon.ValueTypeStr {
		return chunks, err
	}
	s := strings.TrimSpace(v.Str())
	if len(s) < len(`[""]`) || !strings.HasPrefix(s, `["`) || !strings.HasSuffix(s, `"]`) {
		return nil, ErrNoChunks
	}
	if len(s) > budget.left {
		return nil, ErrTooLarge
	}
	// One part more than the limit holds the rest, uncut, and tells that
	// there were more.
	parts := r.chunkLimit()
	if parts < math.MaxInt {
		parts++
	}
	docs := strings.SplitN(s[2:len(s)-2], `", "`, parts)
	n, err := r.keep(len(docs))
	if err != nil {
		return nil, err
	}
	for _, d := range docs[:n] {
		if !budget.take(len(d)) {
			return nil, ErrTooLarge
		}
	}
	return docs[:n], nil
}
