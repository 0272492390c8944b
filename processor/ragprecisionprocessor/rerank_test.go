package ragprecisionprocessor

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

const (
	metricRerankLift = "rag_rerank_lift"
	metricRerankGain = "rag_rerank_lift_gain_total"
	metricRerankLoss = "rag_rerank_lift_loss_total"
)

var (
	rerankBananas = "Bananas are yellow."
	rerankParis   = "Paris is the capital of France."
	rerankOslo    = "Oslo is the capital of Norway."
	rerankSeine   = "Paris sits on the Seine."
)

// cohereRerankSpan adds a cohere.rerank span of OpenLLMetry's Cohere
// instrumentation: the query, the input documents in documents.{i}.index
// and, with returnDocuments, the output's texts.
func cohereRerankSpan(b *batch, name string, input, output []string) ptrace.Span {
	s := b.add(name, pcommon.TraceID{})
	a := s.Attributes()
	a.PutStr("gen_ai.system", "Cohere")
	a.PutStr("llm.request.type", "rerank")
	a.PutStr("gen_ai.prompt.0.user", question)
	for i, d := range input {
		a.PutStr("documents."+strconv.Itoa(i)+".index", d)
	}
	for i, d := range output {
		a.PutDouble("gen_ai.completion."+strconv.Itoa(i)+".relevanceScore", 0.5)
		a.PutStr("gen_ai.completion."+strconv.Itoa(i)+".content", d)
	}
	return s
}

func doubleAttr(t *testing.T, s ptrace.Span, key string) (float64, bool) {
	t.Helper()
	v, ok := s.Attributes().Get(key)
	if ok && v.Type() != pcommon.ValueTypeDouble {
		t.Fatalf("%s is a %s", key, v.Type())
	}
	return v.Double(), ok
}

// A rerank span with its input ranking is scored on its output, and its
// input's first K documents (K the output's) get CP and nDCG from the same
// judgement, which asks about each distinct input document once; the lift
// is recorded with the labels of rag_contextual_precision. A rerank span
// without its input, and any other retrieval, record no lift.
func TestRerankLift(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.ReferenceSources = []string{"reference", "answer", "query"}
	})
	b := newBatch("rag-api")
	// The reranker moved Paris up and brought the Seine from below its
	// output's depth: output [1,0,1], CP 5/6; input's first three
	// [0,1,0], CP 1/2, nDCG 1/log2(3).
	cohereRerankSpan(b, "cohere.rerank", []string{rerankBananas, rerankParis, rerankOslo, rerankSeine},
		[]string{rerankParis, rerankOslo, rerankSeine})
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("cohere.rerank")
	if got := attrStr(s, ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q", got)
	}
	if cp, _ := doubleAttr(t, s, ragattr.Precision); math.Abs(cp-5.0/6) > 1e-9 {
		t.Errorf("CP %v, want 5/6 (the output's)", cp)
	}
	if got := attrStr(s, ragattr.Verdicts); got != "[true,false,true]" {
		t.Errorf("verdicts %s, want the output's three", got)
	}
	if in, ok := doubleAttr(t, s, ragattr.RerankInputPrecision); !ok || math.Abs(in-0.5) > 1e-9 {
		t.Errorf("input CP %v %v, want 0.5", in, ok)
	}
	if in, ok := doubleAttr(t, s, ragattr.RerankInputNDCG); !ok || math.Abs(in-1/math.Log2(3)) > 1e-9 {
		t.Errorf("input nDCG %v %v, want 1/log2(3)", in, ok)
	}
	// Four distinct input documents, four judge requests: the output's
	// three are the input's, and the input's Bananas is judged once.
	if got := len(srv.Requests()); got != 4 {
		t.Errorf("%d judge requests, want 4 (the distinct input documents)", got)
	}
	lift := histogram(t, h.tel, metricRerankLift)
	if len(lift.DataPoints) != 1 {
		t.Fatalf("%d series of %s", len(lift.DataPoints), metricRerankLift)
	}
	dp := lift.DataPoints[0]
	if dp.Count != 1 || math.Abs(dp.Sum-(5.0/6-0.5)) > 1e-9 {
		t.Errorf("lift count %d sum %v, want 1 and 1/3", dp.Count, dp.Sum)
	}
	if !slices.Equal(dp.Bounds, []float64{-1, -0.8, -0.6, -0.4, -0.2, 0, 0.2, 0.4, 0.6, 0.8, 1}) {
		t.Errorf("buckets %v", dp.Bounds)
	}
	// The mean lift's counters: the gain, and a loss of 0 beside it.
	for name, want := range map[string]float64{metricRerankGain: 5.0/6 - 0.5, metricRerankLoss: 0} {
		got, sets := floatSum(t, h, name, nil)
		if len(sets) != 1 || math.Abs(got-want) > 1e-9 || !sets[0].Equals(&dp.Attributes) {
			t.Errorf("%s: %v in %v, want one series of %v with the lift's labels", name, got, sets, want)
		}
	}
	cp := histogram(t, h.tel, metricPrecision)
	if !dp.Attributes.Equals(&cp.DataPoints[0].Attributes) {
		t.Errorf("lift labels %v, CP's %v", dp.Attributes.ToSlice(), cp.DataPoints[0].Attributes.ToSlice())
	}

	// The same documents again: every verdict is cached, no request.
	// Without its input, a rerank is scored on its output alone; a plain
	// retrieval and an unscorable rerank record no lift either.
	b = newBatch("rag-api")
	cohereRerankSpan(b, "again", []string{rerankBananas, rerankParis, rerankOslo, rerankSeine},
		[]string{rerankSeine, rerankParis, rerankOslo})
	// A reranker that moved Paris down: output [0,1], input [1,0].
	cohereRerankSpan(b, "hurts", []string{rerankParis, rerankOslo}, []string{rerankOslo, rerankParis})
	cohereRerankSpan(b, "no input", nil, []string{rerankParis, rerankOslo})
	cohereRerankSpan(b, "short input", []string{rerankParis}, []string{rerankParis, rerankOslo})
	cohereRerankSpan(b, "no output", []string{rerankParis, rerankOslo}, nil)
	b.project("plain", question, "", rerankParis, rerankOslo)
	h.consume(b.td)
	h.waitSpans(7)
	if got := len(srv.Requests()); got != 4 {
		t.Errorf("%d judge requests after the same documents again, want still 4", got)
	}
	again := h.span("again")
	if in, ok := doubleAttr(t, again, ragattr.RerankInputPrecision); !ok || math.Abs(in-0.5) > 1e-9 {
		t.Errorf("again: input CP %v %v, want 0.5", in, ok)
	}
	for _, name := range []string{"no input", "short input", "plain"} {
		s := h.span(name)
		if got := attrStr(s, ragattr.Status); got != ragattr.StatusScored {
			t.Errorf("%s: status %q, want scored", name, got)
		}
		for _, k := range []string{ragattr.RerankInputPrecision, ragattr.RerankInputNDCG} {
			if _, ok := s.Attributes().Get(k); ok {
				t.Errorf("%s has %s", name, k)
			}
		}
	}
	if got := attrStr(h.span("no output"), ragattr.Status); got != "" {
		t.Errorf("no output: status %q, want no retrieval", got)
	}
	// The data source is the span's name here: a series each.
	var lifts []string
	for _, dp := range histogram(t, h.tel, metricRerankLift).DataPoints {
		ds, _ := dp.Attributes.Value(labelDataSource)
		lifts = append(lifts, ds.AsString()+"="+strconv.FormatUint(dp.Count, 10))
	}
	slices.Sort(lifts)
	if !slices.Equal(lifts, []string{"again=1", "cohere.rerank=1", "hurts=1"}) {
		t.Errorf("lifts recorded %v, want one for each span with both rankings", lifts)
	}
	for name, want := range map[string]float64{metricRerankGain: 0, metricRerankLoss: 0.5} {
		got, sets := floatSum(t, h, name, map[string]string{labelDataSource: "hurts"})
		if len(sets) != 1 || math.Abs(got-want) > 1e-9 {
			t.Errorf("hurts: %s %v in %d series, want %v", name, got, len(sets), want)
		}
	}
}

// With the builtin judge, an OpenInference RERANKER span's input is judged
// in the same judgement: a reranker that returned the input's first K
// documents reordered costs no verdict beyond them, and its input's scores
// follow from the output's verdicts.
func TestRerankLiftBuiltin(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.ReferenceSources = []string{"reference", "answer", "query"}
	})
	b := newBatch("rag-api")
	s := b.add("rerank", pcommon.TraceID{})
	a := s.Attributes()
	a.PutStr("openinference.span.kind", "RERANKER")
	a.PutStr("reranker.query", "What is the capital of France?")
	input := []string{"Oslo is the capital of Norway.", "The capital of France is Paris.", "Bananas grow in bunches.", "Lisbon is in Portugal."}
	output := []string{input[1], input[0], input[2]}
	for i, d := range input {
		a.PutStr("reranker.input_documents."+strconv.Itoa(i)+".document.content", d)
	}
	for i, d := range output {
		a.PutStr("reranker.output_documents."+strconv.Itoa(i)+".document.content", d)
	}
	h.consume(b.td)
	h.waitSpans(1)
	s = h.span("rerank")
	if got := attrStr(s, ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q", got)
	}
	vs, _ := s.Attributes().Get(ragattr.Verdicts)
	out := make([]bool, vs.Slice().Len())
	for i := range out {
		out[i] = vs.Slice().At(i).Bool()
	}
	// The input's first three are the output's second, first and third.
	in := []bool{out[1], out[0], out[2]}
	wantCP, wantNDCG := scoreOf(in)
	if got, ok := doubleAttr(t, s, ragattr.RerankInputPrecision); !ok || math.Abs(got-wantCP) > 1e-9 {
		t.Errorf("input CP %v %v, want %v (verdicts %v)", got, ok, wantCP, in)
	}
	if got, ok := doubleAttr(t, s, ragattr.RerankInputNDCG); !ok || math.Abs(got-wantNDCG) > 1e-9 {
		t.Errorf("input nDCG %v %v, want %v", got, ok, wantNDCG)
	}
	if got := counterValue(t, h.tel, metricVerdicts, nil); got != 3 {
		t.Errorf("%d verdicts, want 3: the input's first three are the output's", got)
	}
	if n := histogram(t, h.tel, metricRerankLift).DataPoints[0].Count; n != 1 {
		t.Errorf("%d lifts recorded, want 1", n)
	}
}

// scoreOf is CP and binary nDCG of verdicts, written out.
func scoreOf(vs []bool) (cp, ndcg float64) {
	var sum, dcg, ideal float64
	rel := 0
	for i, v := range vs {
		if v {
			rel++
			sum += float64(rel) / float64(i+1)
			dcg += 1 / math.Log2(float64(i+2))
			ideal += 1 / math.Log2(float64(rel+1))
		}
	}
	if rel == 0 {
		return 0, 0
	}
	return sum / float64(rel), dcg / ideal
}
