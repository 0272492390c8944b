package spanreader

import (
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Arize OpenInference (docs/SOURCES.md's dialect table): a RETRIEVER span
// flattens its documents into retrieval.documents.{i}.document.content; an
// LLM span's answer is output.value. A RETRIEVER span that names a model
// (llm.model_name) generated an answer from what it retrieved, as Bedrock's
// RetrieveAndGenerate does: its documents are the answer's citations, in
// the order the answer cites them, not a ranking, and it is no retrieval.
// Such a span has an output.value, which most retrievers lack: only those
// are looked at for llm.model_name (confirm), which is not watched, since
// a key of its length is common. A RERANKER span is a retrieval whose
// ranking is the reranker's output: its documents are
// reranker.output_documents.{i}.document.content, its query
// reranker.query, its input ranking
// reranker.input_documents.{i}.document.content.
const (
	keyOISpanKind       = "openinference.span.kind"
	keyOIInput          = "input.value"
	keyOIOutput         = "output.value"
	keyOIModelName      = "llm.model_name"
	oiRetriever         = "RETRIEVER"
	oiReranker          = "RERANKER"
	keyOIRerankQuery    = "reranker.query"
	oiRerankedPrefix    = "reranker.output_documents."
	oiRerankInputPrefix = "reranker.input_documents."
	oiLLM               = "LLM"
	oiDocumentsPrefix   = "retrieval.documents."
	oiContentSuffix     = ".document.content"
)

// Watched attributes of openInferenceDialect, by index.
const (
	oiSpanKind = iota
	oiOutput
)

type openInferenceDialect struct{}

func (openInferenceDialect) id() Dialect { return DialectOpenInference }

func (openInferenceDialect) watches() watchList {
	return watchList{attributes: []string{keyOISpanKind, keyOIOutput}}
}

func (openInferenceDialect) classify(_ *Reader, w *watched) class {
	switch w.str(oiSpanKind) {
	case oiRetriever:
		if _, output := w.value(oiOutput); output {
			return classMaybe
		}
		return classRetrieval
	case oiReranker:
		return classRetrieval
	case oiLLM:
		return classModelCall
	}
	return 0
}

// confirm: a retriever with an output is a retrieval unless it names the
// model that generated the output.
func (openInferenceDialect) confirm(_ *Reader, span ptrace.Span, _ watched) bool {
	_, generated := span.Attributes().Get(keyOIModelName)
	return !generated
}

func (openInferenceDialect) read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error) {
	attrs := span.Attributes()
	ret := Retrieval{Query: str(attrs, keyOIInput)}
	prefix := oiDocumentsPrefix
	reranker := str(attrs, keyOISpanKind) == oiReranker
	if reranker {
		ret.Query, prefix = str(attrs, keyOIRerankQuery), oiRerankedPrefix
	}
	var err error
	if wantChunks {
		budget := r.budget()
		ret.Chunks, err = r.openInferenceChunks(attrs, prefix, &budget)
		if err == nil && reranker {
			ret.RerankInput = openInferenceInput(attrs, len(ret.Chunks), &budget)
		}
	}
	return ret, err
}

func (openInferenceDialect) answer(_ *Reader, w watched) string { return w.str(oiOutput) }

// openInferenceChunks reads prefix{i}.document.content (a retriever's
// retrieval.documents., a reranker's reranker.output_documents.) in the
// order of i.
func (r *Reader) openInferenceChunks(attrs pcommon.Map, prefix string, budget *byteBudget) ([]string, error) {
	docs := openInferenceDocuments(attrs, prefix)
	n, err := r.keep(len(docs))
	if err != nil {
		return nil, err
	}
	return documentTexts(docs[:n], budget)
}

// openInferenceInput reads a reranker's input ranking,
// reranker.input_documents.{i}.document.content in the order of i, cut to
// its first k documents (the output's depth): nil when it has fewer than k
// or does not fit in what is left of the budget.
func openInferenceInput(attrs pcommon.Map, k int, budget *byteBudget) []string {
	docs := openInferenceDocuments(attrs, oiRerankInputPrefix)
	if k == 0 || len(docs) < k {
		return nil
	}
	input, err := documentTexts(docs[:k], budget)
	if err != nil {
		return nil
	}
	return input
}

// oiDocument is one prefix{index}.document.content.
type oiDocument struct {
	index int
	text  string
}

// openInferenceDocuments is the documents prefix{i}.document.content, in
// the order of i. Indices need not be contiguous; duplicates cannot occur
// since attribute keys are unique.
func openInferenceDocuments(attrs pcommon.Map, prefix string) []oiDocument {
	var docs []oiDocument
	for k, v := range attrs.All() {
		if len(k) < len(prefix)+len(oiContentSuffix) ||
			!strings.HasPrefix(k, prefix) || !strings.HasSuffix(k, oiContentSuffix) {
			continue // "retrieval.documents.document.content" has both, overlapping
		}
		idx := k[len(prefix) : len(k)-len(oiContentSuffix)]
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || strconv.Itoa(i) != idx {
			continue // not a plain index ("+1", "01", "a"): not this convention
		}
		docs = append(docs, oiDocument{index: i, text: valueText(v)})
	}
	slices.SortFunc(docs, func(a, b oiDocument) int { return a.index - b.index })
	return docs
}

// documentTexts is the texts of docs, within the budget.
func documentTexts(docs []oiDocument, budget *byteBudget) ([]string, error) {
	chunks := make([]string, len(docs))
	for i, d := range docs {
		chunks[i] = d.text
		if !budget.take(len(chunks[i])) {
			return nil, ErrTooLarge
		}
	}
	return chunks, nil
}
