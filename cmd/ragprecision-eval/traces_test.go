package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/recording"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor"
)

// recordingConfigYAML is the recording collector's configuration, as
// -config reads it: trace_join on, the data source from an attribute.
const recordingConfigYAML = `
receivers: {otlp: {protocols: {grpc: {}}}}
processors:
  ragprecision:
    trace_join: {enabled: true, wait: 2s}
    attributes: {data_source: index}
    judge: {model: builtin:lexical}
exporters: {file: {path: recorded.json}}
service: {pipelines: {traces: {receivers: [otlp], processors: [ragprecision], exporters: [file]}}}
`

// trafficBuilder makes the traces an application would send.
type trafficBuilder struct{ next byte }

func (b *trafficBuilder) id() (pcommon.TraceID, pcommon.SpanID) {
	b.next++
	return pcommon.TraceID{b.next, 0xaa}, pcommon.SpanID{b.next, 0xbb}
}

func newBatch(service string) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	return td, rs.ScopeSpans().AppendEmpty().Spans()
}

// projectSpan is a retrieval in the project's keys, its reference on it.
func (b *trafficBuilder) projectSpan(spans ptrace.SpanSlice, index, reference string, chunks ...string) ptrace.Span {
	s := spans.AppendEmpty()
	tid, sid := b.id()
	s.SetTraceID(tid)
	s.SetSpanID(sid)
	s.SetName("retrieve")
	s.Attributes().PutStr("index", index)
	s.Attributes().PutStr("rag.query", "Where is the Louvre?")
	if reference != "" {
		s.Attributes().PutStr("rag.reference", reference)
	}
	c := s.Attributes().PutEmptySlice("rag.chunks")
	for _, t := range chunks {
		c.AppendEmpty().SetStr(t)
	}
	return s
}

// joinedTrace is an OpenInference retriever whose reference is its root
// span's answer, and a GenAI retrieval whose reference is the answer of the
// trace's last LLM span: the retrievals in one batch, the answers in the
// next, as an application's spans end.
func (b *trafficBuilder) joinedTrace() (retrievals, answers ptrace.Traces) {
	retrievals, rspans := newBatch("agent")
	answers, aspans := newBatch("agent")
	oiTrace, oiRoot := b.id()
	oi := rspans.AppendEmpty()
	oi.SetTraceID(oiTrace)
	oi.SetSpanID(pcommon.SpanID{0xee, 1})
	oi.SetParentSpanID(oiRoot)
	oi.SetName("oi-retriever")
	oi.Attributes().PutStr("openinference.span.kind", "RETRIEVER")
	oi.Attributes().PutStr("input.value", "Where is the Louvre?")
	oi.Attributes().PutStr("retrieval.documents.0.document.content", "Oslo is the capital of Norway.")
	oi.Attributes().PutStr("retrieval.documents.1.document.content", "The Louvre is a museum in Paris.")
	root := aspans.AppendEmpty()
	root.SetTraceID(oiTrace)
	root.SetSpanID(oiRoot)
	root.SetName("chain")
	root.Attributes().PutStr("openinference.span.kind", "CHAIN")
	root.Attributes().PutStr("output.value", "The Louvre is in Paris.")

	gaTrace, gaRoot := b.id()
	ga := rspans.AppendEmpty()
	ga.SetTraceID(gaTrace)
	ga.SetSpanID(pcommon.SpanID{0xee, 2})
	ga.SetParentSpanID(gaRoot)
	ga.SetName("genai-retrieval")
	ga.Attributes().PutStr("gen_ai.operation.name", "retrieval")
	ga.Attributes().PutStr("gen_ai.data_source.id", "wiki")
	ga.Attributes().PutStr("gen_ai.retrieval.query.text", "Where is the Louvre?")
	ga.Attributes().PutStr("gen_ai.retrieval.documents", `[{"content": "The Louvre is a museum in Paris."}, {"content": "Bergen is a city in Norway."}]`)
	chat := aspans.AppendEmpty()
	chat.SetTraceID(gaTrace)
	chat.SetSpanID(pcommon.SpanID{0xee, 3})
	chat.SetParentSpanID(gaRoot)
	chat.SetName("chat")
	chat.SetEndTimestamp(10)
	chat.Attributes().PutStr("gen_ai.operation.name", "chat")
	chat.Attributes().PutStr("gen_ai.output.messages", `[{"role": "assistant", "parts": [{"type": "text", "content": "The Louvre is in Paris."}]}]`)
	gaRootSpan := aspans.AppendEmpty()
	gaRootSpan.SetTraceID(gaTrace)
	gaRootSpan.SetSpanID(gaRoot)
	gaRootSpan.SetName("agent")
	return retrievals, answers
}

// traffic is what the tests record: project spans in two indexes (one
// without a reference), and two trace-joined retrievals.
func traffic() []ptrace.Traces {
	var b trafficBuilder
	first, spans := newBatch("rag-api")
	b.projectSpan(spans, "handbook", "The Louvre is in Paris.",
		"The Louvre is a museum in Paris.", "Oslo is the capital of Norway.", "Paris is the home of the Louvre museum.")
	b.projectSpan(spans, "handbook", "The Louvre is in Paris.", "Bergen is a city in Norway.", "The Louvre museum is in Paris.")
	b.projectSpan(spans, "faq", "The Louvre is in Paris.", "The Louvre is in Paris, France.", "Oslo is in Norway.")
	b.projectSpan(spans, "faq", "", "A chunk with nothing to be judged against.")
	plain := spans.AppendEmpty()
	plain.SetName("render")
	retrievals, answers := b.joinedTrace()
	return []ptrace.Traces{first, retrievals, answers}
}

// record runs the processor over batches as a collector would with the
// file exporter behind it, and returns the lines the exporter writes.
func record(t *testing.T, mutate func(*config.Config), batches ...ptrace.Traces) []string {
	t.Helper()
	ctx := context.Background()
	f := ragprecisionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*config.Config)
	cfg.TraceJoin.Enabled, cfg.TraceJoin.Wait = true, 2e9
	cfg.Attributes.DataSource = "index"
	if mutate != nil {
		mutate(cfg)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for _, td := range batches {
		if err := p.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var lines []string
	m := &ptrace.JSONMarshaler{}
	for _, td := range sink.AllTraces() {
		b, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return lines
}

func writeLines(t *testing.T, name string, lines []string) string {
	t.Helper()
	return writeFile(t, name, strings.Join(lines, "\n")+"\n")
}

// statuses counts the spans of lines by recorded status.
func statuses(t *testing.T, lines []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	rd := recording.NewReader(strings.NewReader(strings.Join(lines, "\n")), "lines")
	for {
		td, err := rd.Next()
		if err != nil {
			return out
		}
		forEachSpan(td, func(s ptrace.Span) { out[recording.ResultOf(s).Status]++ })
	}
}

// The same judge on the same configuration reproduces the recorded
// verdicts exactly: overall, per data source, trace-joined answers
// included.
func TestTracesSameJudgeReproduces(t *testing.T) {
	lines := record(t, nil, traffic()...)
	if st := statuses(t, lines); st[ragattr.StatusScored] != 5 || st[ragattr.StatusNoReference] != 1 {
		t.Fatalf("recorded statuses %v, want 5 scored and 1 no_reference", st)
	}
	rec := writeLines(t, "recorded.json", lines)
	cfg := writeFile(t, "collector.yaml", recordingConfigYAML)
	results := filepath.Join(t.TempDir(), "verdicts.jsonl")
	out, stderr, err := runEval(t, "-traces", rec, "-config", cfg, "-progress", "0", "-out", results)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	// -out: a line per span judged, named by trace and span ID, its labels
	// the recorded verdicts, with no half.
	outLines := strings.Split(strings.TrimSpace(readFile(t, results)), "\n")
	if len(outLines) != 5 {
		t.Fatalf("-out has %d lines", len(outLines))
	}
	for _, l := range outLines {
		var r spanResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.ID) != 32+1+16 || r.Split != "" || r.Type == "" || fmt.Sprint(r.Labels) != fmt.Sprint(r.Verdicts) || strings.Contains(l, `"split"`) {
			t.Errorf("-out line %s", l)
		}
	}
	f := row(t, out, "all", "builtin:lexical")
	if f[colRetrievals] != "5" || f[colKappa] != "1.000" || f[colCPMAE] != "0.000" || f[colF1] != "1.000" {
		t.Fatalf("the recording's own judge: %v\n%s", f, out)
	}
	for ds, n := range map[string]string{"handbook": "2", "faq": "1", "oi-retriever": "1", "wiki": "1"} {
		if f := row(t, out, ds, "builtin:lexical"); f[colRetrievals] != n || f[colCPMAE] != "0.000" {
			t.Errorf("data source %s: %v", ds, f)
		}
	}
	for _, want := range []string{
		"read as processors::ragprecision of " + cfg,
		"1 selected but not scored (no_reference 1), 5 scored; 5 of them compared\n",
		"has the recorded judge_version",
		"Recorded verdicts: 5 by builtin:lexical",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Without -config the data source is not read from "index", and the
	// spans' own names are the rows.
	out, _, err = runEval(t, "-traces", rec, "-progress", "0")
	if err != nil {
		t.Fatal(err)
	}
	if f := row(t, out, "retrieve", "builtin:lexical"); f[colRetrievals] != "3" {
		t.Errorf("without -config: %v\n%s", f, out)
	}
}

// Spans that cannot be compared are counted by reason, and bad lines are
// left out, counted, with the first one quoted.
func TestTracesSkipped(t *testing.T) {
	lines := record(t, nil, traffic()...)
	// Two spans scored, then one of them loses its verdicts and the other
	// gains one; a span recorded by a collector that did not select it;
	// two lines that are not OTLP JSON traces.
	b := trafficBuilder{next: 100}
	damaged, spans := newBatch("rag-api")
	b.projectSpan(spans, "faq", "The Louvre is in Paris.", "The Louvre is in Paris.")
	b.projectSpan(spans, "faq", "The Louvre is in Paris.", "The Louvre is in Paris.")
	scored := record(t, nil, damaged)
	if len(scored) != 1 {
		t.Fatalf("%d lines", len(scored))
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(scored[0]))
	if err != nil {
		t.Fatal(err)
	}
	got := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	got.At(0).Attributes().Remove(ragattr.Verdicts)
	if err := got.At(1).Attributes().PutEmptySlice(ragattr.Verdicts).FromRaw([]any{true, false}); err != nil {
		t.Fatal(err)
	}
	unselected, spans := newBatch("rag-api")
	b.projectSpan(spans, "faq", "The Louvre is in Paris.", "The Louvre is in Paris.")
	m := &ptrace.JSONMarshaler{}
	damagedLine, _ := m.MarshalTraces(td)
	unselectedLine, _ := m.MarshalTraces(unselected)
	all := append(lines, string(damagedLine), string(unselectedLine), "not json", `{"resourceSpans": [`)
	rec := writeLines(t, "recorded.json", all)
	out, _, err := runEval(t, "-traces", rec, "-config", writeFile(t, "collector.yaml", recordingConfigYAML), "-progress", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		fmt.Sprintf("2 lines are not OTLP JSON traces and were left out (first: %s:%d: not an OTLP JSON object", rec, len(lines)+3),
		"Retrieval spans: 1 not selected when recorded, 1 selected but not scored (no_reference 1), 7 scored; 5 of them compared, 2 skipped:",
		"1  " + skipNoVerdicts,
		"1  " + skipChunkCount,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if f := row(t, out, "all", "builtin:lexical"); f[colRetrievals] != "5" || f[colKappa] != "1.000" {
		t.Errorf("the comparable spans: %v", f)
	}
}

// A trace's answer spans missing from the recording: the span judged
// against it is counted, not judged against nothing.
func TestTracesJoinedAnswerMissing(t *testing.T) {
	b := trafficBuilder{next: 50}
	retrievals, answers := b.joinedTrace()
	lines := record(t, nil, retrievals, answers)
	// Keep only the lines with the retrievals, scored.
	var kept []string
	for _, l := range lines {
		if strings.Contains(l, "retrieval.documents") || strings.Contains(l, "gen_ai.retrieval.documents") {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 || len(kept) == len(lines) {
		t.Fatalf("%d of %d lines kept", len(kept), len(lines))
	}
	out, _, err := runEval(t, "-traces", writeLines(t, "recorded.json", kept), "-progress", "0")
	if err == nil || !strings.Contains(err.Error(), "no scored retrieval span to compare") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if !strings.Contains(out, "2  "+skipNoTraceAnswer) {
		t.Fatalf("report:\n%s", out)
	}
}

// Another judge: agreement with the recorded verdicts is what the two
// judges' verdicts say, per data source, with its cost.
func TestTracesAnotherJudge(t *testing.T) {
	lines := record(t, nil, traffic()...)
	rec := writeLines(t, "recorded.json", lines)
	llm := chattest.NewServer(chattest.KeywordJudge("museum"))
	defer llm.Close()
	t.Setenv("EVAL_TRACES_KEY", "sk-test")
	out, _, err := runEval(t, "-traces", rec, "-config", writeFile(t, "collector.yaml", recordingConfigYAML),
		"-judge", "openai:keyword", "-base-url", llm.URL, "-api-key-env", "EVAL_TRACES_KEY", "-progress", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Expected: the recorded verdicts against "mentions museum", chunk by
	// chunk.
	want := map[string]*evalset.Tally{"all": {}}
	chunks := 0
	rd := recording.Open(rec)
	for {
		td, err := rd.Next()
		if err != nil {
			break
		}
		forEachSpan(td, func(s ptrace.Span) {
			r := recording.ResultOf(s)
			if !r.Scored() {
				return
			}
			texts := chunkTexts(s)
			judged := make([]bool, len(texts))
			for i, c := range texts {
				judged[i] = strings.Contains(c, "museum")
			}
			chunks += len(texts)
			ds := s.Name()
			if v, ok := s.Attributes().Get("index"); ok {
				ds = v.Str()
			} else if v, ok := s.Attributes().Get("gen_ai.data_source.id"); ok {
				ds = v.Str()
			}
			for _, k := range []string{"all", ds} {
				if want[k] == nil {
					want[k] = &evalset.Tally{}
				}
				if err := want[k].Add(judged, r.Verdicts); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	for ds, tl := range want {
		m := tl.Metrics()
		f := row(t, out, ds, "openai:keyword")
		if f[colRetrievals] != fmt.Sprint(m.Retrievals) || f[colF1] != fmt.Sprintf("%.3f", m.F1) ||
			f[colKappa] != kappa(m.Kappa) || f[colCPMAE] != fmt.Sprintf("%.3f", m.CPMAE) {
			t.Errorf("%s: %v, want %d spans, F1 %.3f, kappa %s, CP MAE %.3f", ds, f, m.Retrievals, m.F1, kappa(m.Kappa), m.CPMAE)
		}
	}
	if m := want["all"].Metrics(); m.Kappa >= 0.999 || m.CPMAE == 0 {
		t.Fatalf("the judges agree: the test shows nothing (%+v)", m)
	}
	// The verdict cache asks about a (reference, chunk) pair once.
	calls := llm.Calls()
	if calls == 0 || calls >= int64(chunks) {
		t.Errorf("%d requests for %d chunks, some of them the same", calls, chunks)
	}
	if !strings.Contains(out, fmt.Sprintf("openai:keyword: %d requests, %d prompt and %d completion tokens for the 5 spans judged", calls, 100*calls, 10*calls)) {
		t.Errorf("no cost line for %d requests:\n%s", calls, out)
	}
	if !strings.Contains(out, "another judge, or the same with other settings") {
		t.Errorf("no note that the judge differs:\n%s", out)
	}
}

// chunkTexts reads a recorded span's chunks with the default readers.
func chunkTexts(s ptrace.Span) []string {
	c := ptrace.NewSpan()
	s.CopyTo(c)
	recording.Strip(c)
	r := config.NewSpanReader(config.Default())
	d, ok := r.Recognise(c)
	if !ok {
		return nil
	}
	ret, _ := r.Read(c, d)
	return ret.Chunks
}

func TestTracesErrors(t *testing.T) {
	rec := writeLines(t, "recorded.json", record(t, nil, traffic()...))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-traces", rec, "-data", rec}, "-data is for labelled data"},
		{[]string{"-traces", rec, "-against", rec, "-judge", "openai:x"}, "-judge: -against compares two recordings"},
		{[]string{"-traces", rec, "-processor", "ragprecision"}, "-processor names a processor of -config"},
		{[]string{"-against", rec}, "go with -traces"},
		{[]string{"-traces", filepath.Join(t.TempDir(), "missing.json")}, "-traces: "},
		{[]string{"-traces", rec, "-config", writeFile(t, "c.yaml", "processors: {batch: {}}\n")}, "no ragprecision processor"},
		{[]string{"-traces", writeFile(t, "empty.json", "\n")}, "no scored retrieval span"},
	} {
		if _, _, err := runEval(t, append(c.args, "-progress", "0")...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// joinedAnswers rebuilds the answer trace_join found for each span that
// was judged against its trace's answer, wherever the trace's spans are in
// the files: the root span's, else the last-ending LLM span's; traces that
// need none are not held.
func TestJoinedAnswers(t *testing.T) {
	scoredAgainstAnswer := func(s ptrace.Span) {
		s.Attributes().PutStr(ragattr.Status, ragattr.StatusScored)
		s.Attributes().PutStr(ragattr.ReferenceSource, config.SourceAnswer)
		s.Attributes().PutEmptySlice(ragattr.Verdicts).AppendEmpty().SetBool(true)
	}
	llmSpan := func(spans ptrace.SpanSlice, trace pcommon.TraceID, id byte, end pcommon.Timestamp, text string) {
		s := spans.AppendEmpty()
		s.SetTraceID(trace)
		s.SetSpanID(pcommon.SpanID{id})
		s.SetParentSpanID(pcommon.SpanID{1})
		s.SetEndTimestamp(end)
		s.Attributes().PutStr("openinference.span.kind", "LLM")
		s.Attributes().PutStr("output.value", text)
	}
	rootSpan := func(spans ptrace.SpanSlice, trace pcommon.TraceID, text string) {
		s := spans.AppendEmpty()
		s.SetTraceID(trace)
		s.SetSpanID(pcommon.SpanID{1})
		if text != "" {
			s.Attributes().PutStr("output.value", text)
		}
	}
	var b trafficBuilder
	// Trace 1: its LLM spans before the retrieval in the file, the later
	// one in an earlier line; no root. Trace 2: the root after it, with an
	// answer that beats its LLM span's. Trace 3: an answer of its own.
	first, spans := newBatch("agent")
	t1, t2 := pcommon.TraceID{0x11}, pcommon.TraceID{0x22}
	llmSpan(spans, t1, 7, 20, "the later answer")
	llmSpan(spans, t2, 8, 5, "an LLM's answer")
	second, spans := newBatch("agent")
	llmSpan(spans, t1, 9, 10, "the earlier answer")
	for _, tid := range []pcommon.TraceID{t1, t2} {
		s := b.projectSpan(spans, "faq", "", "The Louvre is in Paris.")
		s.SetTraceID(tid)
		s.SetParentSpanID(pcommon.SpanID{1})
		scoredAgainstAnswer(s)
	}
	own := b.projectSpan(spans, "faq", "", "The Louvre is in Paris.")
	own.Attributes().PutStr("rag.answer", "its own answer")
	scoredAgainstAnswer(own)
	third, spans := newBatch("agent")
	rootSpan(spans, t2, "the root's answer")
	rootSpan(spans, own.TraceID(), "not needed")
	var lines []string
	for _, td := range []ptrace.Traces{first, second, third} {
		b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		lines = append(lines, string(b))
	}
	path := writeLines(t, "recorded.json", lines)
	answers, err := joinedAnswers([]string{path}, config.NewSpanReader(config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 2 || answers[t1].Best() != "the later answer" || answers[t2].Best() != "the root's answer" {
		got := map[string]string{}
		for id, a := range answers {
			got[id.String()] = a.Best()
		}
		t.Fatalf("answers %v", got)
	}
	src, err := openTraces([]string{path}, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	var refs []string
	for {
		r, err := src.Next()
		if err != nil {
			break
		}
		ref, from := r.JudgeReference()
		refs = append(refs, from+": "+ref)
	}
	if got := strings.Join(refs, "; "); got != "answer: the later answer; answer: the root's answer; answer: its own answer" {
		t.Fatalf("references %s", got)
	}
}
