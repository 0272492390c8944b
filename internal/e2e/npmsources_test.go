package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// TestNPMInstrumentations runs the retrieval sources of docs/SOURCES.md's
// dialect table that ship on npm — Chroma, Pinecone and Qdrant with
// OpenLLMetry's vector-store instrumentations, Cohere's reranker with
// OpenLLMetry's, Amazon Bedrock Knowledge Bases with OpenInference's,
// LlamaIndex.TS with OpenLLMetry's — as an application
// runs them: the real client libraries and instrumentations, at the
// versions pinned in testdata/npmsources/package-lock.json, against local
// services that answer as the real ones do (vectorservices_test.go),
// exporting over OTLP/HTTP to the built collector. Their retrievals must
// come out scored with the verdicts of a keyword judge in the services'
// rank order (a reranker's on its output, with its input ranking's scores
// beside), and every other span they emit (upserts, gets, deletes,
// retrieve-and-generate, the query engine, the synthesizer, embeddings,
// chat and generate) untouched.
func TestNPMInstrumentations(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	node, npm := requiredTool(t, "node"), requiredTool(t, "npm")
	dir := installNPMSources(t, npm)

	judge := chattest.NewServer(chattest.KeywordJudge("Paris"))
	t.Cleanup(judge.Close)
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Stop)
	c := startCollector(t, bin, judge.URL, sink.Addr())

	chroma := startFakeChroma(t)
	pinecone := startFakePinecone(t)
	bedrock := startFakeBedrockAgentRuntime(t, npmAnswer, []kbChunk{
		{"oslo", npmOslo, 0.9}, {"bananas", npmBananas, 0.8}, {"paris", npmParis, 0.7}, {"seine", npmSeine, 0.1},
	})
	qdrant := startFakeQdrant(t)
	// The reranker is given the chunks in the order of cohereDocs and
	// ranks them by these relevances: Paris, Oslo, the Seine (top 3).
	cohereDocs := []string{npmBananas, npmParis, npmOslo, npmSeine}
	cohere := startFakeCohere(t, npmAnswer, map[string]float64{npmParis: 0.92, npmOslo: 0.61, npmSeine: 0.55, npmBananas: 0.07})

	// Embeddings are chosen so that each service ranks the chunks as
	// wanted below: Chroma by squared distance to (0,0), Pinecone and
	// LlamaIndex's in-memory store by cosine similarity to (1,0).
	type doc struct {
		ID        string    `json:"id"`
		Text      string    `json:"text"`
		Embedding []float64 `json:"embedding"`
	}
	chromaDocs := []doc{{"paris", npmParis, []float64{0.1, 0}}, {"bananas", npmBananas, []float64{0.2, 0}},
		{"seine", npmSeine, []float64{0.3, 0}}, {"oslo", npmOslo, []float64{0.9, 0}}}
	pineconeDocs := []doc{{"paris", npmParis, []float64{1, 0.3}}, {"bananas", npmBananas, []float64{1, 0.1}},
		{"seine", npmSeine, []float64{1, 0.5}}, {"oslo", npmOslo, []float64{0, 1}}}
	llamaDocs := []doc{{"paris", npmParis, []float64{1, 0.1}}, {"bananas", npmBananas, []float64{1, 0.3}},
		{"oslo", npmOslo, []float64{1, 0.5}}, {"seine", npmSeine, []float64{1, 0.7}}, {"lisbon", npmLisbon, []float64{1, 0.9}}}
	// Qdrant's ids are UUIDs (as LangChain.js makes them) or integers.
	type qdrantDoc struct {
		ID        any       `json:"id"`
		Text      string    `json:"text"`
		Embedding []float64 `json:"embedding"`
	}
	qdrantLangChainDocs := []qdrantDoc{
		{"5e0c9d52-2a4b-4f43-9c52-0d6a3c1f0a01", npmParis, []float64{1, 0.1}},
		{"5e0c9d52-2a4b-4f43-9c52-0d6a3c1f0a02", npmBananas, []float64{1, 0.3}},
		{"5e0c9d52-2a4b-4f43-9c52-0d6a3c1f0a03", npmSeine, []float64{1, 0.5}},
		{"5e0c9d52-2a4b-4f43-9c52-0d6a3c1f0a04", npmOslo, []float64{0, 1}}}
	qdrantTextDocs := []qdrantDoc{{1, npmBananas, []float64{1, 0.1}}, {2, npmParis, []float64{1, 0.2}},
		{3, npmOslo, []float64{1, 0.4}}, {4, npmSeine, []float64{0, 1}}}
	asJSON := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "drive.cjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"OTLP_TRACES_URL=http://127.0.0.1:"+c.http+"/v1/traces",
		"CORPUS="+asJSON(map[string]string{"question": npmQuestion, "answer": npmAnswer}),
		"CHROMA_URL="+chroma.URL, "CHROMA_DOCS="+asJSON(chromaDocs), "CHROMA_QUERY=[0,0]",
		"PINECONE_URL="+pinecone.URL, "PINECONE_DOCS="+asJSON(pineconeDocs), "PINECONE_QUERY=[1,0]",
		"BEDROCK_URL="+bedrock.URL,
		"LLAMAINDEX_DOCS="+asJSON(llamaDocs), "LLAMAINDEX_QUERY=[1,0]",
		"QDRANT_URL="+qdrant.URL, "QDRANT_LANGCHAIN_DOCS="+asJSON(qdrantLangChainDocs),
		"QDRANT_TEXT_DOCS="+asJSON(qdrantTextDocs), "QDRANT_QUERY=[1,0]",
		"COHERE_URL="+cohere.URL, "COHERE_DOCS="+asJSON(cohereDocs),
		"OTEL_LOG_LEVEL=error",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("drive.cjs: %v\n%s", err, out)
	}

	want := []npmRetrieval{
		{span: "chromadb.query", verdicts: []bool{true, false, true}, cp: 5.0 / 6},
		{span: "pinecone.query", verdicts: []bool{false, true, true}, cp: 7.0 / 12},
		{span: "bedrock.retrieve", query: npmQuestion, verdicts: []bool{false, false, true}, cp: 1.0 / 3},
		{span: "vector_index_retriever.retrieve", query: npmQuestion, verdicts: []bool{true, false, false, true, false}, cp: 0.75},
		// The query engine's retrieve wraps the retriever's, and the
		// instrumentation records it too, with the same documents.
		{span: "retriever_query_engine.retrieve", query: npmQuestion, verdicts: []bool{true, false, false, true, false}, cp: 0.75},
		// Qdrant's search span carries only the query vector: the payloads
		// are judged against the trace's answer.
		{span: "workflow qdrant langchain > qdrant.search", verdicts: []bool{true, false, true}, cp: 5.0 / 6},
		{span: "workflow qdrant text > qdrant.search", verdicts: []bool{false, true, false}, cp: 0.5},
		// Scored on the reranker's output (Paris, Oslo, the Seine); its
		// input's first three (bananas, Paris, Oslo) score CP 1/2 and nDCG
		// (1/log2 3) / 1.
		{span: "workflow cohere > cohere.rerank", query: npmQuestion, verdicts: []bool{true, false, true}, cp: 5.0 / 6,
			rerankInput: &npmRerankInput{cp: 0.5, ndcg: 1 / math.Log2(3)}},
	}
	// Spans that must come out, and untouched.
	others := []string{
		"workflow chroma", "chromadb.add", "chromadb.get", "chromadb.delete",
		"workflow pinecone", "pinecone.upsert", "pinecone.delete",
		"workflow bedrock", "bedrock.retrieve_and_generate",
		"retriever_query_engine.query", "compact_and_refine.synthesize", "base_embedding.get_query_embedding",
		"workflow qdrant langchain", "workflow qdrant langchain > qdrant.upsert",
		"workflow qdrant langchain > qdrant.retrieve", "workflow qdrant langchain > qdrant.delete",
		"workflow qdrant text", "workflow qdrant text > qdrant.upsert",
		"workflow qdrant text > qdrant.retrieve", "workflow qdrant text > qdrant.delete",
		"workflow cohere", "workflow cohere > cohere.chat", "workflow cohere > cohere.completion",
		// Without returnDocuments the span has the input documents and
		// only the output's relevance scores: no ranking to score.
		"workflow cohere without documents", "workflow cohere without documents > cohere.rerank",
		"workflow cohere v2",
	}
	spans, all := waitForNamedSpans(ctx, t, sink, append(retrievalNames(want), others...))
	t.Cleanup(func() {
		if t.Failed() {
			logSpans(t, sink.Traces())
			t.Logf("chroma: %v\npinecone: %v\nbedrock: %v\nqdrant: %v\ncohere: %v", chroma.log.all(), pinecone.log.all(),
				bedrock.log.all(), qdrant.log.all(), cohere.log.all())
		}
	})
	for _, w := range want {
		checkNPMRetrieval(t, spans, w)
	}
	for _, s := range all {
		if slices.ContainsFunc(want, func(w npmRetrieval) bool { return spans[w.span].SpanID() == s.SpanID() }) {
			continue
		}
		for k := range s.Attributes().All() {
			if strings.HasPrefix(k, "rag.contextual_precision") || strings.HasPrefix(k, "rag.rerank") {
				t.Errorf("%s is not a retrieval, but has %s", s.Name(), k)
			}
		}
		for _, e := range s.Events().All() {
			if e.Name() == "gen_ai.evaluation.result" {
				t.Errorf("%s is not a retrieval, but has an evaluation event", s.Name())
			}
		}
	}
	// Cohere's v2 client reached the service, and its rerank and chat
	// came out as no span: the instrumentation wraps the v1 client only.
	for _, req := range []string{"POST /v2/rerank", "POST /v2/chat"} {
		if !slices.Contains(cohere.log.all(), req) {
			t.Errorf("the v2 client never sent %s", req)
		}
	}
	for name := range spans {
		if strings.HasPrefix(name, "workflow cohere v2 > ") {
			t.Errorf("the v2 client emitted %s", name)
		}
	}
	// The judge saw each source's query where the source carries one.
	for _, w := range want {
		if w.query == "" {
			continue
		}
		found := false
		for _, r := range judge.Requests() {
			found = found || r.Block("QUESTION") == w.query
		}
		if !found {
			t.Errorf("%s: no judge request with the question %q", w.span, w.query)
		}
	}
}

const (
	npmQuestion = "What is the capital of France?"
	npmAnswer   = "The capital of France is Paris."
	npmParis    = "Paris is the capital and most populous city of France."
	npmBananas  = "Bananas are an excellent source of potassium and fibre."
	npmSeine    = "France's capital, Paris, sits on the Seine."
	npmOslo     = "Oslo is the capital of Norway."
	npmLisbon   = "Lisbon is the capital of Portugal."
)

// npmRetrieval is a retrieval span a source emits and the score it must
// come out with.
type npmRetrieval struct {
	span     string
	query    string // the question the judge must see; "" when the source carries none
	verdicts []bool
	cp       float64
	// rerankInput is the scores of a reranker's input ranking, for a
	// span that carries it; nil for any other retrieval.
	rerankInput *npmRerankInput
}

// npmRerankInput is the scores of a reranker's input ranking (its first
// K, K the number of output documents), from the output's verdicts.
type npmRerankInput struct {
	cp, ndcg float64
}

func retrievalNames(want []npmRetrieval) []string {
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.span
	}
	return names
}

func checkNPMRetrieval(t *testing.T, spans map[string]ptrace.Span, w npmRetrieval) {
	t.Helper()
	a := spans[w.span].Attributes()
	get := func(k string) pcommon.Value { v, _ := a.Get(k); return v }
	if st := get("rag.contextual_precision.status").Str(); st != "scored" {
		t.Errorf("%s: status %q, want scored", w.span, st)
		return
	}
	var verdicts []bool
	for _, v := range get("rag.contextual_precision.verdicts").Slice().All() {
		verdicts = append(verdicts, v.Bool())
	}
	if !slices.Equal(verdicts, w.verdicts) {
		t.Errorf("%s: verdicts %v, want %v", w.span, verdicts, w.verdicts)
	}
	if cp := get("rag.contextual_precision").Double(); math.Abs(cp-w.cp) > 1e-9 {
		t.Errorf("%s: CP %v, want %v", w.span, cp, w.cp)
	}
	if got := get("rag.contextual_precision.passed").Bool(); got != (w.cp >= 0.7) {
		t.Errorf("%s: passed %v", w.span, got)
	}
	if got := get("rag.contextual_precision.reference_source").Str(); got != "answer" {
		t.Errorf("%s: reference_source %q, want answer (the trace's)", w.span, got)
	}
	inCP, hasInCP := a.Get("rag.rerank.input_contextual_precision")
	inNDCG, hasInNDCG := a.Get("rag.rerank.input_ndcg")
	switch {
	case w.rerankInput == nil && (hasInCP || hasInNDCG):
		t.Errorf("%s: not a reranker, but has the input ranking's scores", w.span)
	case w.rerankInput == nil:
	case !hasInCP || !hasInNDCG:
		t.Errorf("%s: no input ranking's scores (rag.rerank.input_contextual_precision %v, rag.rerank.input_ndcg %v)",
			w.span, hasInCP, hasInNDCG)
	default:
		if math.Abs(inCP.Double()-w.rerankInput.cp) > 1e-9 {
			t.Errorf("%s: input CP %v, want %v", w.span, inCP.Double(), w.rerankInput.cp)
		}
		if math.Abs(inNDCG.Double()-w.rerankInput.ndcg) > 1e-9 {
			t.Errorf("%s: input nDCG %v, want %v", w.span, inNDCG.Double(), w.rerankInput.ndcg)
		}
	}
}

// waitForNamedSpans waits until a span of each name has come out of the
// collector, and returns the spans by name, and every span that came out.
// A name "root > name" is the span of that name in the trace whose root
// span has that name, for spans that an instrumentation names alike; a
// name asked for that comes out twice is an error.
func waitForNamedSpans(ctx context.Context, t *testing.T, sink *otlpsink.Sink, names []string) (map[string]ptrace.Span, []ptrace.Span) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var all []ptrace.Span
		roots := map[pcommon.TraceID]string{}
		for _, td := range sink.Traces() {
			forEachSpanOf(td, func(s ptrace.Span) {
				all = append(all, s)
				if s.ParentSpanID().IsEmpty() {
					roots[s.TraceID()] = s.Name()
				}
			})
		}
		byName := map[string]ptrace.Span{}
		count := map[string]int{}
		for _, s := range all {
			keys := []string{s.Name()}
			if root, ok := roots[s.TraceID()]; ok && root != s.Name() {
				keys = append(keys, root+" > "+s.Name())
			}
			for _, k := range keys {
				byName[k] = s
				count[k]++
			}
		}
		missing := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return count[n] > 0 })
		if len(missing) == 0 {
			for _, n := range names {
				if count[n] > 1 {
					t.Errorf("span %q came out %d times", n, count[n])
				}
			}
			return byName, all
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			logSpans(t, sink.Traces())
			t.Fatalf("spans never came out: %v", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func forEachSpanOf(td ptrace.Traces, f func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				f(s)
			}
		}
	}
}

// logSpans logs every span with its attributes and events, to show what
// an instrumentation emitted.
func logSpans(t *testing.T, all []ptrace.Traces) {
	t.Helper()
	for _, td := range all {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					attrs, _ := json.Marshal(s.Attributes().AsRaw())
					t.Logf("span %q (scope %s %s): %s", s.Name(), ss.Scope().Name(), ss.Scope().Version(), attrs)
					for _, e := range s.Events().All() {
						ea, _ := json.Marshal(e.Attributes().AsRaw())
						t.Logf("    event %q: %s", e.Name(), ea)
					}
				}
			}
		}
	}
}

// requiredTool is the path of a program the test needs. Without it the
// test is skipped, except in CI, where it fails.
func requiredTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s is not installed: %v", name, err)
		if inCI() {
			t.Fatal(msg + " (CI is set, so the test must run)")
		}
		t.Skip(msg)
	}
	return path
}

// installNPMSources installs testdata/npmsources, exactly as its lock file
// pins it, into a directory of the test's own (npm's cache makes runs after
// the first fast) and returns that directory.
func installNPMSources(t *testing.T, npm string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "drive.cjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "npmsources", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, f, string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	return dir
}
