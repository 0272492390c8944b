package ragprecisionprocessor

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// Every status and outcome series exists from the start.
func TestZeroSeriesExistAtStart(t *testing.T) {
	h := newHarness(t, nil)
	m, err := h.tel.GetMetric(metricUnscored)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Data.(metricdata.Sum[int64]).DataPoints); n != len(ragattr.UnscoredStatuses) {
		t.Fatalf("%d unscored series at start, want %d", n, len(ragattr.UnscoredStatuses))
	}
	m, err = h.tel.GetMetric(metricRequests)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Data.(metricdata.Sum[int64]).DataPoints); n != len(judge.Outcomes) {
		t.Fatalf("%d judge request series at start, want %d", n, len(judge.Outcomes))
	}
}

// The metrics the tests read, by their exported names (metadata.yaml).
const (
	metricPrecision    = "rag_contextual_precision"
	metricPrefix       = "otelcol_processor_ragprecision_"
	metricCandidates   = metricPrefix + "candidate_spans_total"
	metricSelected     = metricPrefix + "selected_spans_total"
	metricScored       = metricPrefix + "scored_spans_total"
	metricUnscored     = metricPrefix + "unscored_spans_total"
	metricRequests     = metricPrefix + "judge_requests_total"
	metricCacheHits    = metricPrefix + "verdict_cache_hits_total"
	metricCacheMisses  = metricPrefix + "verdict_cache_misses_total"
	metricTokens       = metricPrefix + "judge_tokens_total"
	metricLatency      = metricPrefix + "judge_latency_seconds"
	metricHeld         = metricPrefix + "held_spans"
	metricDropped      = metricPrefix + "dropped_spans_total"
	metricSeriesFolded = metricPrefix + "series_folded_total"
	metricVerdicts     = metricPrefix + "verdicts_total"
	metricAnswersLost  = metricPrefix + "trace_answers_evicted_total"
)

// matches reports whether a data point's attributes include want.
func matches(set attribute.Set, want map[string]string) bool {
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// counterValue sums the points of an Int64 counter or up-down counter whose
// attributes include want; 0 when the metric has not been recorded.
func counterValue(t *testing.T, tel *componenttest.Telemetry, name string, want map[string]string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want an int64 sum", name, m.Data)
	}
	var total int64
	for _, dp := range sum.DataPoints {
		if matches(dp.Attributes, want) {
			total += dp.Value
		}
	}
	return total
}

func histogram(t *testing.T, tel *componenttest.Telemetry, name string) metricdata.Histogram[float64] {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is %T", name, m.Data)
	}
	return h
}

// TestMetrics asserts the histogram and the operational metrics through a
// real OpenTelemetry SDK reader.
func TestMetrics(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.ReferenceSources = []string{"reference", "query"}
	})
	b := newBatch("rag-api")
	good := b.project("good", "q", "Paris", capitalChunks...) // [1,0,1] -> 5/6
	good.Attributes().PutStr("gen_ai.data_source.id", "wiki-index")
	b.project("bad", "q", "Paris", "Berlin", "Madrid", "Paris!") // [0,0,1] -> 1/3
	b.project("by-query", "Paris?", "", "Paris", "Rome")         // [1,0] -> 1 against the query
	b.project("no-chunks", "q", "Paris")
	b.plain("plain")
	h.consume(b.td)
	h.waitSpans(5)

	m, err := h.tel.GetMetric(metricPrecision)
	if err != nil {
		t.Fatal(err)
	}
	if m.Unit != "1" {
		t.Errorf("unit %q", m.Unit)
	}
	hist := histogram(t, h.tel, metricPrecision)
	if len(hist.DataPoints) != 3 {
		t.Fatalf("%d series, want 3: %+v", len(hist.DataPoints), hist.DataPoints)
	}
	type series struct {
		service, source, ref, judge string
	}
	got := map[series]metricdata.HistogramDataPoint[float64]{}
	for _, dp := range hist.DataPoints {
		if !slices.Equal(dp.Bounds, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}) {
			t.Fatalf("bounds %v", dp.Bounds)
		}
		if version, _ := dp.Attributes.Value("judge_version"); dp.Attributes.Len() != 5 || version.AsString() != h.p.cfg.Judge.Version() {
			t.Fatalf("labels %v", dp.Attributes.ToSlice())
		}
		v := func(k string) string { x, _ := dp.Attributes.Value(attribute.Key(k)); return x.AsString() }
		got[series{v("service_name"), v("data_source"), v("reference_source"), v("judge_model")}] = dp
	}
	check := func(s series, value float64, bucket int) {
		t.Helper()
		dp, ok := got[s]
		if !ok {
			t.Fatalf("no series %+v in %v", s, got)
		}
		if dp.Count != 1 || math.Abs(dp.Sum-value) > 1e-12 || dp.BucketCounts[bucket] != 1 {
			t.Errorf("%+v: count %d sum %v buckets %v", s, dp.Count, dp.Sum, dp.BucketCounts)
		}
		if len(dp.Exemplars) != 1 {
			t.Fatalf("%+v: %d exemplars", s, len(dp.Exemplars))
		}
	}
	check(series{"rag-api", "wiki-index", "reference", "openai:judge-model"}, 5.0/6.0, 8) // (0.8, 0.9]
	check(series{"rag-api", "bad", "reference", "openai:judge-model"}, 1.0/3.0, 3)        // (0.3, 0.4]
	check(series{"rag-api", "by-query", "query", "openai:judge-model"}, 1.0, 9)           // (0.9, 1.0]

	// Exemplars carry the scored span's IDs.
	ex := got[series{"rag-api", "wiki-index", "reference", "openai:judge-model"}].Exemplars[0]
	scored := h.span("good")
	if [16]byte(ex.TraceID) != [16]byte(scored.TraceID()) || [8]byte(ex.SpanID) != [8]byte(scored.SpanID()) {
		t.Errorf("exemplar %x/%x, span %s/%s", ex.TraceID, ex.SpanID, scored.TraceID(), scored.SpanID())
	}

	for name, want := range map[string]int64{
		metricCandidates: 4, metricSelected: 4, metricScored: 3,
		metricCacheMisses: 8, metricCacheHits: 0, metricHeld: 0,
	} {
		if got := counterValue(t, h.tel, name, nil); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if got := counterValue(t, h.tel, metricUnscored, map[string]string{"status": "no_chunks"}); got != 1 {
		t.Errorf("unscored{no_chunks} = %d", got)
	}
	if got := counterValue(t, h.tel, metricRequests, map[string]string{"outcome": "ok"}); got != 8 {
		t.Errorf("judge_requests{ok} = %d, want 8 (one per chunk)", got)
	}
	if got := counterValue(t, h.tel, metricTokens, map[string]string{"type": "prompt"}); got != 800 {
		t.Errorf("prompt tokens %d", got)
	}
	if got := counterValue(t, h.tel, metricTokens, map[string]string{"type": "completion"}); got != 80 {
		t.Errorf("completion tokens %d", got)
	}
	if lat := histogram(t, h.tel, metricLatency); len(lat.DataPoints) != 1 || lat.DataPoints[0].Count != 8 {
		t.Errorf("judge latency %+v", lat.DataPoints)
	}

	// The same chunks again come from the cache.
	b = newBatch("rag-api")
	b.project("again", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(6)
	if got := counterValue(t, h.tel, metricCacheHits, nil); got != 3 {
		t.Errorf("cache hits %d, want 3", got)
	}
	if got := counterValue(t, h.tel, metricRequests, nil); got != 8 {
		t.Errorf("judge requests %d after a cached span, want 8", got)
	}
}

func TestJudgeRequestOutcomes(t *testing.T) {
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if n == 1 {
			return chattest.Reply{Status: 500}
		}
		return chattest.KeywordJudge("Paris")(n, r)
	})
	h := newHarness(t, func(c *config.Config) { llmJudge(srv.URL)(c); c.Judge.MaxRetries = 1 })
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", "Paris")
	h.consume(b.td)
	h.waitSpans(1)
	if r, ok := counterValue(t, h.tel, metricRequests, map[string]string{"outcome": "retry"}), counterValue(t, h.tel, metricRequests, map[string]string{"outcome": "ok"}); r != 1 || ok != 1 {
		t.Fatalf("retry=%d ok=%d", r, ok)
	}
}

func TestHeldSpansGauge(t *testing.T) {
	h, bj := newBlockedHarness(t, nil)
	b := newBatch("svc")
	b.project("a", "q", "Paris", "Paris 1")
	b.project("b", "q", "Paris", "Paris 2")
	h.consume(b.td)
	if got := counterValue(t, h.tel, metricHeld, nil); got != 2 {
		t.Fatalf("held %d, want 2", got)
	}
	bj.open()
	h.waitSpans(2)
	// Before Shutdown, which takes the gauge away. A span is let go just
	// after the next consumer has it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := counterValue(t, h.tel, metricHeld, nil)
		if got == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %d after forwarding, want 0", got)
		}
		time.Sleep(time.Millisecond)
	}
	h.shutdown(context.Background())
}

// Label values beyond max_series are folded into "other", and counted.
func TestSeriesCap(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.MaxSeries = 2 })
	for i, svc := range []string{"a", "b", "c", "d"} {
		b := newBatch(svc)
		b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
		h.consume(b.td)
		h.waitSpans(i + 1)
	}
	hist := histogram(t, h.tel, metricPrecision)
	services := map[string]uint64{}
	for _, dp := range hist.DataPoints {
		v, _ := dp.Attributes.Value("service_name")
		services[v.AsString()] += dp.Count
	}
	if len(services) != 3 || services["a"] != 1 || services["b"] != 1 || services["other"] != 2 {
		t.Fatalf("series %v", services)
	}
	if got := counterValue(t, h.tel, metricSeriesFolded, nil); got != 2 {
		t.Fatalf("folded %d", got)
	}
}

// Spans scored in place (builtin:lexical) have their counters added once
// per batch and series: the sums are those of the spans, series by series,
// and the histogram still gets every score.
func TestInlineScoresAreCountedByBatch(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Attributes.DataSource = "app.index" })
	if !h.p.engine.Inline() {
		t.Fatal("the default judge is not inline")
	}
	b := newBatch("rag-api")
	chunkSets := [][]string{capitalChunks, {"Berlin is in Germany.", "Paris is the capital of France."}, {"Bananas are yellow."}}
	for i := range 12 {
		s := b.project(fmt.Sprintf("r%d", i), question, "Paris", chunkSets[i%len(chunkSets)]...)
		s.Attributes().PutStr("app.index", []string{"faq", "wiki"}[i%2])
	}
	h.consume(b.td)
	h.waitSpans(12)

	type sums struct {
		scored, passed, chunks int64
		squares                float64
	}
	want := map[string]*sums{"faq": {}, "wiki": {}}
	for _, s := range h.spansByName() {
		a := s.Attributes()
		idx, _ := a.Get("app.index")
		score, ok := a.Get("rag.contextual_precision")
		if !ok {
			t.Fatalf("%s not scored", s.Name())
		}
		w := want[idx.Str()]
		w.scored++
		w.squares += score.Double() * score.Double()
		if passed, _ := a.Get("rag.contextual_precision.passed"); passed.Bool() {
			w.passed++
		}
		k, _ := a.Get("rag.contextual_precision.k")
		w.chunks += k.Int()
	}
	var chunks, passed int64
	for ds, w := range want {
		series := map[string]string{"service_name": "rag-api", "data_source": ds}
		if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_scored_spans_total", series); got != w.scored {
			t.Errorf("scored{%s} = %d, want %d", ds, got, w.scored)
		}
		if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_passed_spans_total", series); got != w.passed {
			t.Errorf("passed{%s} = %d, want %d", ds, got, w.passed)
		}
		if got, _ := floatSum(t, h, "rag_contextual_precision_squares_total", series); math.Abs(got-w.squares) > 1e-12 {
			t.Errorf("squares{%s} = %v, want %v", ds, got, w.squares)
		}
		chunks += w.chunks
		passed += w.passed
	}
	if passed == 0 || passed == 12 {
		t.Fatalf("%d of 12 passed: the batch should have both", passed)
	}
	if got := counterValue(t, h.tel, "otelcol_processor_ragprecision_verdicts_total", nil); got != chunks {
		t.Errorf("verdicts_total = %d, want %d, one per chunk", got, chunks)
	}
	var count uint64
	for _, dp := range histogram(t, h.tel, "rag_contextual_precision").DataPoints {
		count += dp.Count
	}
	if count != 12 {
		t.Errorf("histogram count %d, want 12", count)
	}
}

// labelValues lists the distinct values of one label over the points of an
// int64 sum.
func labelValues(t *testing.T, h *harness, metric, label string) []string {
	t.Helper()
	m, err := h.tel.GetMetric(metric)
	if err != nil {
		t.Fatalf("%s: %v", metric, err)
	}
	var out []string
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(label)); ok && !slices.Contains(out, v.AsString()) {
			out = append(out, v.AsString())
		}
	}
	slices.Sort(out)
	return out
}

// Every metric it names exists under that name once a span has
// been scored by an LLM judge. (Departure: counters end in _total.)
func TestMetricNames(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	for _, name := range []string{
		"rag_contextual_precision",
		"rag_contextual_precision_squares_total",
		"otelcol_processor_ragprecision_candidate_spans_total",
		"otelcol_processor_ragprecision_selected_spans_total",
		"otelcol_processor_ragprecision_scored_spans_total",
		"otelcol_processor_ragprecision_unscored_spans_total",
		"otelcol_processor_ragprecision_judge_requests_total",
		"otelcol_processor_ragprecision_verdict_cache_hits_total",
		"otelcol_processor_ragprecision_verdict_cache_misses_total",
		"otelcol_processor_ragprecision_judge_tokens_total",
		"otelcol_processor_ragprecision_judge_latency_seconds",
		"otelcol_processor_ragprecision_held_spans",
	} {
		if _, err := h.tel.GetMetric(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// floatSum sums the points of a float64 counter whose attributes include
// want, and returns the attribute sets it found.
func floatSum(t *testing.T, h *harness, name string, want map[string]string) (float64, []attribute.Set) {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var total float64
	var sets []attribute.Set
	for _, dp := range m.Data.(metricdata.Sum[float64]).DataPoints {
		if matches(dp.Attributes, want) {
			total += dp.Value
			sets = append(sets, dp.Attributes)
		}
	}
	return total, sets
}

// The sum of squared scores per series, beside the histogram with
// its labels; candidate, selected and scored counts per service_name and
// data_source; and data_source taken from attributes.data_source before
// gen_ai.data_source.id before the span name.
func TestSquaresAndPerSeriesCounts(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Attributes.DataSource = "app.index"
	})
	b := newBatch("rag-api")
	good := b.project("retrieve-good", question, "Paris", capitalChunks...) // [1,0,1] -> 5/6
	good.Attributes().PutStr("app.index", "faq")
	good.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	bad := b.project("retrieve-bad", question, "Paris", "Berlin", "Madrid", "Paris!") // [0,0,1] -> 1/3
	bad.Attributes().PutStr("app.index", "faq")
	other := b.project("retrieve-other", question, "Paris", "Paris.") // [1] -> 1
	other.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	h.consume(b.td)
	h.waitSpans(3)

	faq := map[string]string{"service_name": "rag-api", "data_source": "faq"}
	sq, sets := floatSum(t, h, "rag_contextual_precision_squares_total", faq)
	if want := 25.0/36 + 1.0/9; math.Abs(sq-want) > 1e-12 || len(sets) != 1 {
		t.Errorf("squares{faq} = %v over %d series, want %v over 1", sq, len(sets), want)
	}
	if len(sets) == 1 {
		labels := map[string]string{}
		for _, kv := range sets[0].ToSlice() {
			labels[string(kv.Key)] = kv.Value.AsString()
		}
		want := map[string]string{"service_name": "rag-api", "data_source": "faq", "reference_source": "reference", "judge_model": "openai:judge-model",
			"judge_version": h.p.cfg.Judge.Version()}
		if fmt.Sprint(labels) != fmt.Sprint(want) {
			t.Errorf("squares labels %v, want the histogram's %v", labels, want)
		}
	}
	if sq, _ := floatSum(t, h, "rag_contextual_precision_squares_total", map[string]string{"data_source": "wiki"}); sq != 1 {
		t.Errorf("squares{wiki} = %v, want 1", sq)
	}
	wiki := map[string]string{"service_name": "rag-api", "data_source": "wiki"}
	for _, c := range []struct {
		name      string
		faq, wiki int64
	}{
		{"otelcol_processor_ragprecision_candidate_spans_total", 2, 1},
		{"otelcol_processor_ragprecision_selected_spans_total", 2, 1},
		{"otelcol_processor_ragprecision_scored_spans_total", 2, 1},
	} {
		if got := counterValue(t, h.tel, c.name, faq); got != c.faq {
			t.Errorf("%s{faq} = %d, want %d", c.name, got, c.faq)
		}
		if got := counterValue(t, h.tel, c.name, wiki); got != c.wiki {
			t.Errorf("%s{wiki} = %d, want %d", c.name, got, c.wiki)
		}
	}
}

// The retrieval diagnostics' metrics count what the spans carry: scored
// retrievals by outcome, nDCG and reciprocal rank in histograms beside CP's,
// and the chunks judged and judged relevant at each rank.
func TestRetrievalMetrics(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("rag-api")
	b.project("a", "q", "Paris", "Paris", "Berlin", "Paris!")                                                                     // [1,0,1] misranked
	b.project("b", "q", "Paris", "Berlin", "Madrid", "Paris")                                                                     // [0,0,1] misranked
	b.project("c", "q", "Paris", "Paris", "Paris.", "Rome")                                                                       // [1,1,0] ideal
	b.project("d", "q", "Paris", "Rome", "Oslo", "Bern", "Bonn", "Kiel", "Metz", "Lyon", "Pisa", "Graz", "Riga", "Paris", "Nice") // relevant at rank 11 only
	h.consume(b.td)
	h.waitSpans(4)

	outcomes := map[string]int64{}
	for _, o := range []string{"ideal", "misranked", "miss"} {
		outcomes[o] = counterValue(t, h.tel, "rag_retrieval_outcome_total", map[string]string{"outcome": o})
	}
	if outcomes["ideal"] != 1 || outcomes["misranked"] != 3 || outcomes["miss"] != 0 {
		t.Errorf("outcomes %v, want ideal 1, misranked 3 (d has a relevant chunk at rank 11)", outcomes)
	}
	sums := map[string]float64{}
	for _, name := range []string{"rag_retrieval_ndcg", "rag_retrieval_reciprocal_rank"} {
		for _, dp := range histogram(t, h.tel, name).DataPoints {
			sums[name] += dp.Sum
			if _, ok := dp.Attributes.Value("variant"); ok {
				t.Errorf("%s has a variant label without attributes.variant", name)
			}
		}
	}
	wantRR := 1 + 1.0/3 + 1 + 1.0/11
	wantNDCG := (1+1.0/2)/(1+1/math.Log2(3)) + 0.5 + 1 + 1/math.Log2(12)
	if math.Abs(sums["rag_retrieval_reciprocal_rank"]-wantRR) > 1e-9 || math.Abs(sums["rag_retrieval_ndcg"]-wantNDCG) > 1e-9 {
		t.Errorf("sums %v, want reciprocal rank %v, nDCG %v", sums, wantRR, wantNDCG)
	}
	// Ranks 1-3 are judged in all four retrievals, 4-10 in d alone, and
	// rank 11 and beyond (d's 11th and 12th chunks) count under 11+.
	judged := map[string]int64{"1": 4, "2": 4, "3": 4, "4": 1, "10": 1, "11+": 2}
	relevant := map[string]int64{"1": 2, "2": 1, "3": 2, "4": 0, "10": 0, "11+": 1}
	for rank, want := range judged {
		if got := counterValue(t, h.tel, "rag_retrieval_chunks_judged_total", map[string]string{"rank": rank}); got != want {
			t.Errorf("chunks judged at rank %s = %d, want %d", rank, got, want)
		}
		if got := counterValue(t, h.tel, "rag_retrieval_chunks_relevant_total", map[string]string{"rank": rank}); got != relevant[rank] {
			t.Errorf("chunks relevant at rank %s = %d, want %d", rank, got, relevant[rank])
		}
	}
}

// A span whose attributes and resource lack attributes.variant's attribute
// is recorded without a variant label, beside the labelled variants.
func TestVariantLabelAbsentWithoutTheAttribute(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Attributes.Variant = "retriever.version" })
	b := newBatch("rag-api")
	s := b.project("retrieve", question, "Paris", capitalChunks...)
	s.Attributes().PutStr("retriever.version", "v1")
	b.project("retrieve", question, "Paris", capitalChunks...) // no variant anywhere
	h.consume(b.td)
	h.waitSpans(2)
	got := map[string]uint64{}
	for _, dp := range histogram(t, h.tel, "rag_contextual_precision").DataPoints {
		v, ok := dp.Attributes.Value("variant")
		key := "absent"
		if ok {
			key = "variant=" + v.AsString()
		}
		got[key] += dp.Count
	}
	if want := map[string]uint64{"variant=v1": 1, "absent": 1}; !maps.Equal(got, want) {
		t.Errorf("rag_contextual_precision by variant label %v, want %v", got, want)
	}
}

// attributes.variant labels every product metric with the value of that
// attribute, taken from the span, else from its resource, and variants
// count against max_series.
func TestVariantLabel(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Attributes.Variant = "retriever.version"
		c.MaxSeries = 2
	})
	b := newBatch("rag-api")
	b.td.ResourceSpans().At(0).Resource().Attributes().PutStr("retriever.version", "v1")
	b.project("retrieve", question, "Paris", capitalChunks...) // v1, from the resource
	s := b.project("retrieve", question, "Paris", capitalChunks...)
	s.Attributes().PutStr("retriever.version", "v2") // the span's own wins
	s = b.project("retrieve", question, "Paris", capitalChunks...)
	s.Attributes().PutStr("retriever.version", "v3") // a third series: over max_series
	h.consume(b.td)
	h.waitSpans(3)

	for _, name := range []string{"rag_contextual_precision", "rag_retrieval_ndcg", "rag_retrieval_reciprocal_rank"} {
		got := map[string]uint64{}
		for _, dp := range histogram(t, h.tel, name).DataPoints {
			v, _ := dp.Attributes.Value("variant")
			svc, _ := dp.Attributes.Value("service_name")
			got[v.AsString()+"/"+svc.AsString()] += dp.Count
		}
		if want := map[string]uint64{"v1/rag-api": 1, "v2/rag-api": 1, "other/other": 1}; !maps.Equal(got, want) {
			t.Errorf("%s by variant/service %v, want %v", name, got, want)
		}
	}
	for _, v := range []string{"v1", "v2", "other"} {
		if got := counterValue(t, h.tel, "rag_retrieval_outcome_total", map[string]string{"variant": v}); got != 1 {
			t.Errorf("rag_retrieval_outcome_total{variant=%q} = %d, want 1", v, got)
		}
	}
	if got := counterValue(t, h.tel, metricSeriesFolded, nil); got != 1 {
		t.Errorf("series_folded_total = %d, want 1", got)
	}
	// The operational counters keep their labels: no variant.
	if got := counterValue(t, h.tel, metricScored, map[string]string{"service_name": "rag-api", "data_source": "retrieve"}); got != 2 {
		t.Errorf("scored_spans_total{rag-api, retrieve} = %d, want 2", got)
	}
}
