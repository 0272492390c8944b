package spanreader

import "go.opentelemetry.io/collector/pdata/ptrace"

// The project's own keys (docs/SOURCES.md's dialect table): rag.chunks marks a
// retrieval; rag.query, rag.answer and rag.reference go with it.
const (
	keyRAGChunks    = "rag.chunks"
	keyRAGQuery     = "rag.query"
	keyRAGAnswer    = "rag.answer"
	keyRAGReference = "rag.reference"
)

type projectDialect struct{}

func (projectDialect) id() Dialect { return DialectProject }

func (projectDialect) watches() watchList {
	return watchList{attributes: []string{keyRAGChunks}}
}

// classify: rag.chunks is present, whatever its type; a value that holds
// no chunks makes the span a candidate with status no_chunks.
func (projectDialect) classify(_ *Reader, w *watched) class {
	if _, ok := w.value(0); ok {
		return classRetrieval
	}
	return 0
}

func (projectDialect) confirm(*Reader, ptrace.Span, watched) bool { return false }

func (projectDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	attrs := span.Attributes()
	ret := Retrieval{
		Query:     str(attrs, keyRAGQuery),
		Answer:    str(attrs, keyRAGAnswer),
		Reference: str(attrs, keyRAGReference),
	}
	var err error
	if wantChunks {
		budget := r.budget()
		ret.Chunks, err = r.chunksFromValue(attrs, keyRAGChunks, &budget)
	}
	return ret, err
}

// answer: the project's keys carry a retrieval's own answer (rag.answer),
// not the trace's.
func (projectDialect) answer(*Reader, watched) string { return "" }
