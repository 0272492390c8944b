package spanreader

import "go.opentelemetry.io/collector/pdata/ptrace"

// The OpenTelemetry GenAI semantic conventions (docs/SOURCES.md's dialect
// table): a span whose gen_ai.operation.name is retrieval holds documents
// in gen_ai.retrieval.documents; a model call's answer is in
// gen_ai.output.messages.
const (
	keyGenAIOperation = "gen_ai.operation.name"
	keyGenAIOutput    = "gen_ai.output.messages"
	keyGenAIQuery     = "gen_ai.retrieval.query.text"
	keyGenAIDocuments = "gen_ai.retrieval.documents"
	genAIRetrieval    = "retrieval"
)

// Watched attributes of genAIDialect, by index.
const (
	genAIOperation = iota
	genAIOutput
)

type genAIDialect struct{}

func (genAIDialect) id() Dialect { return DialectGenAI }

func (genAIDialect) watches() watchList {
	return watchList{attributes: []string{keyGenAIOperation, keyGenAIOutput}}
}

// classify: the retrieval operation, or one of those that call a model.
func (genAIDialect) classify(_ *Reader, w *watched) class {
	switch w.str(genAIOperation) {
	case genAIRetrieval:
		return classRetrieval
	case "chat", "text_completion", "generate_content":
		return classModelCall
	}
	return 0
}

func (genAIDialect) confirm(*Reader, ptrace.Span, watched) bool { return false }

// read: documents are an array (of strings, or of maps with the text in
// content, else text) or a JSON string encoding one. GenAI makes content
// opt-in; documents without it are no chunks.
func (genAIDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	attrs := span.Attributes()
	ret := Retrieval{Query: str(attrs, keyGenAIQuery)}
	var err error
	if wantChunks {
		budget := r.budget()
		ret.Chunks, err = r.chunksFromValue(attrs, keyGenAIDocuments, &budget)
	}
	return ret, err
}

// answer joins the text parts of gen_ai.output.messages:
// [{"role": "assistant", "parts": [{"type": "text", "content": "…"}]}].
func (genAIDialect) answer(r *Reader, w watched) string {
	s := w.str(genAIOutput)
	if s == "" || len(s) > r.limits.MaxBytes {
		return ""
	}
	return messagesText(s)
}
