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
			sentCase: sentCase{question: q, ranking: rankingGood}, received: true, status: "scored",
			scored: true, score: 0.8333, passed: true, verdicts: []bool{true, false, true}, referenceSource: "reference",
		},
		{sentCase: sentCase{question: q, ranking: rankingBad}, received: true, status: "timeout"},
		{sentCase: sentCase{question: q, ranking: rankingBad}},
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
		{"QUERY", "RANKING", "DIALECT", "STATUS", "CP", "RESULT", "VERDICTS", "REFERENCE"},
		{"good", "rag.*", "scored", "0.833", "PASS", "✓✗✓", "reference"},
		{"bad", "timeout", "-"},
		{"bad", "missing"},
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
	if col(lines[0], "RANKING") != col(lines[1], "good") || col(lines[0], "VERDICTS") != col(lines[1], "✓✗✓") {
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

func TestSummarize(t *testing.T) {
	s := summarize([]result{
		{sentCase: sentCase{ranking: rankingGood}, received: true, scored: true, score: 1},
		{sentCase: sentCase{ranking: rankingGood}, received: true, scored: true, score: 0.5},
		{sentCase: sentCase{ranking: rankingBad}, received: true, scored: true, score: 0.25},
		{sentCase: sentCase{ranking: rankingBad}, received: true, status: "timeout"},
	})
	if s.good.mean() != 0.75 || s.bad.mean() != 0.25 || s.scored != 3 || s.received != 4 {
		t.Errorf("got %+v", s)
	}
	if got := (meanCP{}).String(); got != "no scores" {
		t.Errorf("empty mean = %q", got)
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
rag_contextual_precision_sum{data_source="handbook"} 6.25
rag_contextual_precision_count{data_source="handbook"} 10
`
	lines, err := filterMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"# TYPE otelcol_processor_ragprecision_scored_spans_total counter",
		"otelcol_processor_ragprecision_scored_spans_total 16",
		"# TYPE rag_contextual_precision histogram",
		`rag_contextual_precision_bucket{data_source="handbook",le="0.1"} 0`,
		`rag_contextual_precision_sum{data_source="handbook"} 6.25`,
		`rag_contextual_precision_count{data_source="handbook"} 10`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !hasHistogram(lines) || hasHistogram(lines[:2]) {
		t.Error("hasHistogram wrong")
	}
}

// TestCollectResults reads annotations the way the processor writes them
// (SPEC §5) and notices a plain span that was touched.
func TestCollectResults(t *testing.T) {
	retrieval := trace.SpanID{1}
	plainOK, plainTouched, plainLost := trace.SpanID{2}, trace.SpanID{3}, trace.SpanID{4}
	s := sent{
		cases: []sentCase{{question: questions[0], ranking: rankingGood, retrieval: retrieval}, {retrieval: trace.SpanID{9}}},
		plain: []trace.SpanID{plainOK, plainTouched, plainLost},
	}

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	span := spans.AppendEmpty()
	span.SetSpanID(pcommon.SpanID(retrieval))
	attrs := span.Attributes()
	attrs.PutStr(attrStatus, "scored")
	attrs.PutDouble(attrScore, 0.5833)
	attrs.PutBool(attrPassed, false)
	attrs.PutStr(attrReferenceSource, "answer")
	attrs.PutStr(attrJudge, "builtin:lexical")
	vs := attrs.PutEmptySlice(attrVerdicts)
	for _, v := range []bool{false, true, true} {
		vs.AppendEmpty().SetBool(v)
	}
	ev := span.Events().AppendEmpty()
	ev.SetName(eventEvaluation)
	ev.Attributes().PutStr("gen_ai.evaluation.explanation", "2 of 3 chunks relevant")

	ok := spans.AppendEmpty()
	ok.SetSpanID(pcommon.SpanID(plainOK))
	ok.Attributes().PutStr("url.path", "/healthz")
	touched := spans.AppendEmpty()
	touched.SetSpanID(pcommon.SpanID(plainTouched))
	touched.Attributes().PutStr(attrStatus, "no_chunks")

	o := collectResults(s, []ptrace.Traces{td})
	r := o.results[0]
	if !r.received || !r.scored || r.score != 0.5833 || r.passed || r.status != "scored" ||
		r.referenceSource != "answer" || r.judge != "builtin:lexical" ||
		verdictMarks(r.verdicts) != "✗✓✓" || r.explanation != "2 of 3 chunks relevant" {
		t.Errorf("read %+v", r)
	}
	if o.results[1].received {
		t.Error("a span that never came back counts as received")
	}
	if len(o.plainChanged) != 2 {
		t.Errorf("want the touched and the lost plain span reported, got %v", o.plainChanged)
	}
}
