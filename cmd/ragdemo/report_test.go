package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
)

func TestPrintTable(t *testing.T) {
	q := questions[0]
	results := []result{
		{
			sentCase: sentCase{question: q, ranking: rankingGood, variant: variantNew}, received: true, status: "scored",
			scored: true, score: 0.8333, passed: true, verdicts: []bool{true, false, true}, referenceSource: "reference",
			retrievalOutcome: "misranked", ndcg: 0.9197, hasNDCG: true, variant: variantNew,
		},
		{sentCase: sentCase{question: q, ranking: rankingBad, variant: variantOld}, received: true, status: "timeout", variant: variantOld},
		{sentCase: sentCase{question: q, ranking: rankingBad, variant: variantOld}},
	}
	var buf bytes.Buffer
	if err := printTable(&buf, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows, got:\n%s", buf.String())
	}
	for i, want := range [][]string{
		{"QUERY", "RETRIEVER", "DIALECT", "STATUS", "CP", "RESULT", "OUTCOME", "NDCG", "VERDICTS", "REFERENCE"},
		{"v2 (good)", "rag.*", "scored", "0.833", "PASS", "misranked", "0.920", "✓✗✓", "reference"},
		{"v1 (bad)", "timeout", "-"},
		{"v1 (bad)", "missing"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	if !strings.Contains(lines[1], "…") || strings.Contains(lines[1], q.text) {
		t.Errorf("long query not truncated: %q", lines[1])
	}
	// tabwriter aligns by runes, so ✓ and … must not shift the columns.
	col := func(line, word string) int { return utf8.RuneCountInString(line[:strings.Index(line, word)]) }
	if col(lines[0], "RETRIEVER") != col(lines[1], "v2 (good)") || col(lines[0], "VERDICTS") != col(lines[1], "✓✗✓") ||
		col(lines[0], "NDCG") != col(lines[1], "0.920") {
		t.Errorf("columns misaligned:\n%s", buf.String())
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a longer query", 8, "a longe…"},
		{"ümlaut über", 7, "ümlaut…"},
	} {
		if got := truncate(c.in, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// scored is a scored result of variant v.
func scored(v string, cp float64, outcome string) result {
	return result{received: true, scored: true, score: cp, variant: v, retrievalOutcome: outcome, ndcg: cp, hasNDCG: true}
}

func TestSummarize(t *testing.T) {
	s := summarize([]result{
		scored(variantOld, 0.25, "misranked"),
		scored(variantNew, 1, "ideal"),
		scored(variantNew, 0.5, "misranked"),
		scored(variantOld, 0, "miss"),
		{received: true, status: "timeout", variant: variantNew},
		{},
	})
	if s.scored != 4 || s.received != 5 || len(s.variants) != 2 {
		t.Fatalf("got %+v", s)
	}
	best, worse := s.variants[0], s.variants[1]
	if best.name != variantNew || best.cp.Count() != 2 || best.cp.Mean() != 0.75 || best.ndcg.Mean() != 0.75 ||
		best.outcomes["ideal"] != 1 || best.outcomes["misranked"] != 1 {
		t.Errorf("best variant first: %+v", best)
	}
	if worse.name != variantOld || worse.cp.Mean() != 0.125 || worse.outcomes["miss"] != 1 {
		t.Errorf("worse variant: %+v", worse)
	}
	if !ranksBetter(s, variantNew, variantOld) || ranksBetter(s, variantOld, variantNew) || ranksBetter(s, variantNew, "v3") {
		t.Error("ranksBetter wrong")
	}
}

// TestPrintComparison checks the summary's figures against a computation
// by hand: means, Student's t intervals at n-1 df, and Welch's interval of
// the difference.
func TestPrintComparison(t *testing.T) {
	var results []result
	for _, cp := range []float64{1, 1, 0.8333, 1} {
		results = append(results, scored(variantNew, cp, "ideal"))
	}
	for _, cp := range []float64{0.25, 0.4167, 0.25, 0.3333} {
		results = append(results, scored(variantOld, cp, "misranked"))
	}
	var buf bytes.Buffer
	if err := printComparison(&buf, summarize(results)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// v2: mean 0.958, sd 0.0833, t(3) 3.182 → ±0.133; v1: mean 0.3125,
	// sd 0.0798 → ±0.127; difference 0.646, Welch df 5.99 (5 used),
	// t(5) 2.571 · se 0.0577 → ±0.148.
	for _, want := range []string{
		"v2       4       0.958 ± 0.133",
		"v1       4       0.312 ± 0.127",
		"v2 ranks better than v1: mean CP 0.646 ± 0.148 higher, 95% CI +0.498 to +0.794 (Welch's t, 6.0 df).",
		"v1 finds the relevant chunks but ranks them lower (4 more misranked)",
		"Small samples, 4 and 4 scores",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "IDEAL") || !strings.HasSuffix(strings.TrimSpace(lines[2]), "4      0          0") {
		t.Errorf("outcome counts per variant missing:\n%s", out)
	}

	// Two variants the scores cannot tell apart say so.
	buf.Reset()
	results = []result{scored(variantNew, 1, "ideal"), scored(variantNew, 0.25, "misranked"),
		scored(variantOld, 0.9, "misranked"), scored(variantOld, 0.3, "misranked")}
	if err := printComparison(&buf, summarize(results)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "includes 0") || strings.Contains(buf.String(), "ranks better") {
		t.Errorf("overlapping variants:\n%s", buf.String())
	}
	// One variant: nothing to compare.
	buf.Reset()
	if err := printComparison(&buf, summarize(results[:2])); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "nothing to compare") {
		t.Errorf("one variant:\n%s", buf.String())
	}
}

func TestDiagnose(t *testing.T) {
	v := func(name string, ideal, misranked, miss int) *variantScores {
		return &variantScores{name: name, outcomes: map[string]int{"ideal": ideal, "misranked": misranked, "miss": miss}}
	}
	for _, c := range []struct {
		worse, better *variantScores
		want          string
	}{
		{v("v1", 0, 8, 0), v("v2", 6, 2, 0), "ranks them lower (6 more misranked)"},
		{v("v1", 2, 2, 4), v("v2", 6, 2, 0), "misses more (4 more retrievals without a relevant chunk)"},
		{v("v1", 6, 2, 0), v("v2", 6, 2, 0), "no more miss or misranked"},
	} {
		if got := diagnose(c.worse, c.better); !strings.Contains(got, c.want) {
			t.Errorf("diagnose(%v, %v) = %q, want %q", c.worse.outcomes, c.better.outcomes, got, c.want)
		}
	}
}

func TestFilterMetrics(t *testing.T) {
	const exposition = `# HELP otelcol_process_uptime Uptime of the process
# TYPE otelcol_process_uptime counter
otelcol_process_uptime 3.05
# HELP otelcol_processor_ragprecision_scored_spans_total Retrieval spans scored.
# TYPE otelcol_processor_ragprecision_scored_spans_total counter
otelcol_processor_ragprecision_scored_spans_total 16
otelcol_processor_ragprecision_judge_latency_seconds_bucket{le="0.025"} 3
# TYPE rag_contextual_precision histogram
rag_contextual_precision_bucket{data_source="handbook",le="0.1"} 0
rag_contextual_precision_bucket{data_source="handbook",le="0.7"} 4
rag_contextual_precision_bucket{data_source="handbook",le="+Inf"} 10
rag_contextual_precision_sum{data_source="handbook"} 6.25
rag_contextual_precision_count{data_source="handbook"} 10
# TYPE rag_retrieval_outcome_total counter
rag_retrieval_outcome_total{data_source="handbook",outcome="ideal"} 6
# TYPE rag_retrieval_ndcg histogram
rag_retrieval_ndcg_count{data_source="handbook"} 10
`
	lines, err := filterMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"# TYPE otelcol_processor_ragprecision_scored_spans_total counter",
		"otelcol_processor_ragprecision_scored_spans_total 16",
		"# TYPE rag_contextual_precision histogram",
		`rag_contextual_precision_bucket{data_source="handbook",le="0.7"} 4`,
		`rag_contextual_precision_sum{data_source="handbook"} 6.25`,
		`rag_contextual_precision_count{data_source="handbook"} 10`,
		"# TYPE rag_retrieval_outcome_total counter",
		`rag_retrieval_outcome_total{data_source="handbook",outcome="ideal"} 6`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !hasHistogram(lines) || hasHistogram(lines[:2]) {
		t.Error("hasHistogram wrong")
	}
}

// TestCollectResults reads annotations under the names the README gives
// them, and notices a plain span that was touched.
func TestCollectResults(t *testing.T) {
	retrieval := trace.SpanID{1}
	plainOK, plainTouched, plainDiagnosed, plainLost := trace.SpanID{2}, trace.SpanID{3}, trace.SpanID{5}, trace.SpanID{4}
	s := sent{
		cases: []sentCase{{question: questions[0], ranking: rankingGood, variant: variantNew, retrieval: retrieval}, {retrieval: trace.SpanID{9}}},
		plain: []trace.SpanID{plainOK, plainTouched, plainDiagnosed, plainLost},
	}

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	span := spans.AppendEmpty()
	span.SetSpanID(pcommon.SpanID(retrieval))
	attrs := span.Attributes()
	attrs.PutStr("rag.contextual_precision.status", "scored")
	attrs.PutDouble("rag.contextual_precision", 0.5833)
	attrs.PutBool("rag.contextual_precision.passed", false)
	attrs.PutStr("rag.contextual_precision.reference_source", "answer")
	attrs.PutStr("rag.contextual_precision.judge", "builtin:lexical")
	attrs.PutStr("rag.retrieval.outcome", "misranked")
	attrs.PutDouble("rag.retrieval.ndcg", 0.6934)
	attrs.PutStr("retriever.version", "v2")
	vs := attrs.PutEmptySlice("rag.contextual_precision.verdicts")
	for _, v := range []bool{false, true, true} {
		vs.AppendEmpty().SetBool(v)
	}
	ev := span.Events().AppendEmpty()
	ev.SetName("gen_ai.evaluation.result")
	ev.Attributes().PutStr("gen_ai.evaluation.explanation", "2 of 3 chunks relevant")

	ok := spans.AppendEmpty()
	ok.SetSpanID(pcommon.SpanID(plainOK))
	ok.Attributes().PutStr("url.path", "/healthz")
	touched := spans.AppendEmpty()
	touched.SetSpanID(pcommon.SpanID(plainTouched))
	touched.Attributes().PutStr("rag.contextual_precision.status", "no_chunks")
	diagnosed := spans.AppendEmpty()
	diagnosed.SetSpanID(pcommon.SpanID(plainDiagnosed))
	diagnosed.Attributes().PutStr("rag.retrieval.outcome", "miss")

	o := collectResults(s, []ptrace.Traces{td})
	r := o.results[0]
	if !r.received || !r.scored || r.score != 0.5833 || r.passed || r.status != "scored" ||
		r.referenceSource != "answer" || r.judge != "builtin:lexical" ||
		verdictMarks(r.verdicts) != "✗✓✓" || r.explanation != "2 of 3 chunks relevant" ||
		r.retrievalOutcome != "misranked" || !r.hasNDCG || r.ndcg != 0.6934 || r.variant != "v2" {
		t.Errorf("read %+v", r)
	}
	if o.results[1].received {
		t.Error("a span that never came back counts as received")
	}
	if len(o.plainChanged) != 3 {
		t.Errorf("want the touched, the diagnosed and the lost plain span reported, got %v", o.plainChanged)
	}
}

func TestExplainRankings(t *testing.T) {
	q := questions[1] // memory_limiter: relevant memory-limiter and pipelines
	good := sentCase{question: q, ranking: rankingGood, variant: variantNew, chunkIDs: q.good}
	bad := sentCase{question: q, ranking: rankingBad, variant: variantOld, chunkIDs: q.bad}
	results := []result{
		// The good ranking as the author labels it: batch, a distractor, at rank 2.
		{sentCase: good, scored: true, verdicts: []bool{true, false, true, false}, retrievalOutcome: outcomeMisranked, variant: variantNew},
		// Bad rankings are not explained: misranked is what they are for.
		{sentCase: bad, scored: true, verdicts: []bool{false, false, true, true}, retrievalOutcome: outcomeMisranked, variant: variantOld},
		// The judge missed pipelines, labelled relevant, at rank 3.
		{sentCase: good, scored: true, verdicts: []bool{false, false, false, true}, retrievalOutcome: outcomeMisranked, variant: variantNew},
		// Ideal, unscored: nothing to say.
		{sentCase: good, scored: true, verdicts: []bool{true, false, false, false}, retrievalOutcome: outcomeIdeal, variant: variantNew},
		{sentCase: good, status: "timeout"},
	}
	got := explainRankings(results)
	want := []string{
		"row 1 (v2): rank 2 is batch, a distractor put there on purpose (the judge agrees), above a relevant chunk.",
		"row 3 (v2): rank 1 is memory-limiter, which the author labels relevant and the judge did not; " +
			"rank 2 is batch, a distractor put there on purpose (the judge agrees); " +
			"rank 3 is pipelines, which the author labels relevant and the judge did not, above a relevant chunk.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if agree, judged := labelAgreement(results); agree != 4+4+1+3 || judged != 16 {
		t.Errorf("labelAgreement = %d of %d, want 12 of 16", agree, judged)
	}
}

func TestInProcessJudgeNote(t *testing.T) {
	lexical := []result{{scored: true, judge: "builtin:lexical"}, {scored: true, judge: "builtin:lexical"}, {status: "timeout"}}
	if note := inProcessJudgeNote(lexical, nil); !strings.Contains(note, "builtin:lexical judges inside the collector, without requests") ||
		!strings.Contains(note, "scored_spans_total counts 2") {
		t.Errorf("note %q", note)
	}
	// Past a batch's inline budget, the workers judge, with requests.
	lines := []string{
		`otelcol_processor_ragprecision_judge_requests_total{judge_model="builtin:lexical",outcome="ok",purpose="traffic"} 13`,
		`otelcol_processor_ragprecision_judge_requests_total{judge_model="builtin:lexical",outcome="error",purpose="traffic"} 1`,
		`otelcol_processor_ragprecision_judge_requests_total{judge_model="builtin:lexical",outcome="ok",purpose="canary"} 5`,
	}
	if note := inProcessJudgeNote(lexical, lines); !strings.Contains(note, "judge_requests_total counts their 14") ||
		strings.Contains(note, "stays at 0") {
		t.Errorf("note with requests %q", note)
	}
	for name, results := range map[string][]result{
		"an LLM judge": {{scored: true, judge: "builtin:lexical"}, {scored: true, judge: "openai:gpt-4o-mini"}},
		"no score":     {{status: "timeout", judge: "builtin:lexical"}},
	} {
		if note := inProcessJudgeNote(results, nil); note != "" {
			t.Errorf("%s: note %q, want none", name, note)
		}
	}
}

// The demo's summary names each data source's adaptive percentage, or says
// the rate is fixed and what it selected.
func TestSamplingSummary(t *testing.T) {
	fixed := []string{
		"# TYPE otelcol_processor_ragprecision_candidate_spans_total counter",
		`otelcol_processor_ragprecision_candidate_spans_total{data_source="a"} 12`,
		`otelcol_processor_ragprecision_candidate_spans_total{data_source="b"} 4`,
		`otelcol_processor_ragprecision_selected_spans_total{data_source="a"} 12`,
		`otelcol_processor_ragprecision_selected_spans_total{data_source="b"} 4`,
	}
	if got, want := samplingSummary(fixed), "Sampling: a fixed sampling_percentage (adaptive_sampling is off): 16 of 16 candidate spans selected."; got != want {
		t.Errorf("fixed:\n got %q\nwant %q", got, want)
	}
	adaptive := append(fixed,
		"# TYPE rag_sampling_percentage gauge",
		`rag_sampling_percentage{data_source="handbook",service_name="shop"} 12.5`,
		`rag_sampling_percentage{data_source="faq",service_name="shop"} 100`)
	if got, want := samplingSummary(adaptive), "Sampling: adaptive_sampling; the current percentage per service/data source: shop/faq 100%, shop/handbook 12.5%."; got != want {
		t.Errorf("adaptive:\n got %q\nwant %q", got, want)
	}
}
