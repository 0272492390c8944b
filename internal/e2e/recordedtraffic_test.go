package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/recording"
)

// The tests of this file record scored traffic with the file exporter and
// judge it again: offline with ragprecision-eval -traces, and through a
// collector running examples/replay.yaml fed by ragreplay (docs/OPERATING.md,
// "Replaying recorded traffic"). Each has its own ports, files and judges.

// recordingTemplate is a collector that scores with an LLM judge and
// records what it forwards with the file exporter.
const recordingTemplate = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{{GRPC}}
      http:
        endpoint: 127.0.0.1:{{HTTP}}
processors:
  ragprecision:
    max_wait: 10s
    trace_join:
      enabled: true
      wait: 3s
    judge:
      model: openai:e2e-judge
      base_url: {{JUDGE}}
      api_key: ${env:E2E_JUDGE_API_KEY}
      max_requests_per_second: 0
      max_retries: 1
      timeout: 4s
  batch:
    timeout: 100ms
exporters:
  file:
    path: {{FILE}}
    flush_interval: 100ms
extensions:
  health_check:
    endpoint: 127.0.0.1:{{HEALTH}}
service:
  extensions: [health_check]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{METRICS}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision, batch]
      exporters: [file]
`

// longestWord is the longest word of s, punctuation aside (the first of
// equals).
func longestWord(s string) string {
	best := ""
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:?!")
		if len(w) > len(best) {
			best = w
		}
	}
	return best
}

// referenceJudge calls a chunk relevant when it contains the longest word
// of the reference it is judged against, so that a replay judged against
// another reference (the query, a wrong answer) gives other verdicts.
func referenceJudge(_ int, r chattest.Request) chattest.Reply {
	v := "no"
	if w := longestWord(r.Block("REFERENCE")); w != "" && strings.Contains(r.Block("CHUNK"), w) {
		v = "yes"
	}
	return chattest.Reply{Content: fmt.Sprintf(`{"verdict":%q,"reason":"reference check"}`, v), PromptTokens: 100, CompletionTokens: 10}
}

// sendGenAI sends a GenAI agent trace over OTLP/HTTP: a retrieval whose
// reference is the answer of the trace's chat span (trace_join), under a
// root span without one.
func sendGenAI(ctx context.Context, t *testing.T, endpoint string) (spans int, want []sent) {
	t.Helper()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-genai"))))
	tr := tp.Tracer("e2e")
	ctx, root := tr.Start(ctx, "invoke_agent")
	_, ret := tr.Start(ctx, "genai-retrieval", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "retrieval"),
		attribute.String("gen_ai.data_source.id", "landmarks"),
		attribute.String("gen_ai.retrieval.query.text", "Which landmark stands in the French capital?"),
		attribute.String("gen_ai.retrieval.documents", `[{"content": "Berlin has a TV tower."}, {"content": "The Eiffel Tower is in Paris."}]`)))
	ret.End()
	_, chat := tr.Start(ctx, "chat", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.output.messages", `[{"role": "assistant", "parts": [{"type": "text", "content": "The Eiffel Tower is in Paris."}]}]`)))
	chat.End()
	root.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return 3, []sent{{"genai-retrieval", []bool{false, true}, 0.5, false, "answer", "e2e-genai"}}
}

// recorded is a recording made by recordTraffic.
type recorded struct {
	file, config string
	judgeURL     string
	want         []sent
	spans        int
}

// recordTraffic runs the recording collector with the file exporter, sends
// it project-dialect traces over OTLP/gRPC and trace-joined OpenInference
// and GenAI ones over OTLP/HTTP, checks what it recorded, and stops it.
func recordTraffic(t *testing.T, bin string) recorded {
	t.Helper()
	judge := chattest.NewServer(referenceJudge)
	t.Cleanup(judge.Close)
	dir := t.TempDir()
	rec := recorded{file: filepath.Join(dir, "recorded.json"), judgeURL: judge.URL}
	ports := collector{grpc: freePort(t), http: freePort(t), metrics: freePort(t), health: freePort(t)}
	cfg := render(t, recordingTemplate, map[string]string{"GRPC": ports.grpc, "HTTP": ports.http, "JUDGE": judge.URL,
		"FILE": rec.file, "HEALTH": ports.health, "METRICS": ports.metrics})
	rec.config = writeFile(t, dir, "recording.yaml", cfg)
	c := launchCollector(t, bin, cfg, ports.health, "E2E_JUDGE_API_KEY=sk-e2e-recording")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, send := range []func(context.Context, *testing.T, string) (int, []sent){
		func(ctx context.Context, t *testing.T, _ string) (int, []sent) {
			return sendGRPC(ctx, t, "127.0.0.1:"+ports.grpc)
		},
		sendHTTP, sendGenAI,
	} {
		n, want := send(ctx, t, "127.0.0.1:"+ports.http)
		rec.spans += n
		rec.want = append(rec.want, want...)
	}
	waitForFileSpans(t, rec.file, rec.spans, 30*time.Second)
	c.stop(t)
	got := readRecording(t, rec.file)
	if n := countSpans(got); n != rec.spans {
		t.Fatalf("%d spans recorded, %d sent", n, rec.spans)
	}
	checkSpans(t, got, rec.want)
	return rec
}

// readRecording reads a file exporter's file whole (the tests' files are
// small), failing on a bad line.
func readRecording(t *testing.T, path string) []ptrace.Traces {
	t.Helper()
	rd := recording.Open(path)
	defer rd.Close()
	var out []ptrace.Traces
	for {
		td, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, td)
	}
}

func countSpans(all []ptrace.Traces) int {
	n := 0
	for _, td := range all {
		n += td.SpanCount()
	}
	return n
}

// waitForFileSpans polls a file the file exporter writes until it holds n
// spans (a line being written is not counted yet).
func waitForFileSpans(t *testing.T, path string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	got := 0
	for time.Now().Before(deadline) {
		got = 0
		rd := recording.Open(path)
		for {
			td, err := rd.Next()
			var le *recording.LineError
			if errors.As(err, &le) {
				continue
			}
			if err != nil {
				break
			}
			got += td.SpanCount()
		}
		rd.Close()
		if got >= n {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s holds %d spans after %v, want %d", path, got, timeout, n)
}

// goTool is the go command, to build the commands the tests run.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command on $PATH or in %s", p)
	}
	return p
}

// buildCommand builds ./cmd/name of this checkout into a directory of the
// test's own.
func buildCommand(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(goTool(t), "build", "-o", out, "./cmd/"+name)
	cmd.Dir = repoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, b)
	}
	return out
}

// runCommand runs a built command and returns its standard output.
func runCommand(t *testing.T, env []string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("%s:\n%s", filepath.Base(argv[0]), stdout.String())
	return stdout.String()
}

// reportRow returns the fields of a ragprecision-eval report row.
func reportRow(t *testing.T, out, dataSource, judge string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 8 && f[0] == dataSource && f[2] == judge {
			return f
		}
	}
	t.Fatalf("no %s row for %s in\n%s", dataSource, judge, out)
	return nil
}

// Columns of a report row: data source, spans, judge, precision, recall,
// F1, kappa, accuracy, CP MAE, ...
const (
	reportSpans = 1
	reportF1    = 5
	reportKappa = 6
	reportCPMAE = 8
)

// TestRecordedTrafficEval: ragprecision-eval -traces on the file the
// collector recorded, with the recording's configuration and judge,
// reproduces the recorded verdicts exactly (kappa 1, CP error 0), the
// trace-joined OpenInference and GenAI retrievals included.
func TestRecordedTrafficEval(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	eval := buildCommand(t, "ragprecision-eval")
	rec := recordTraffic(t, bin)

	out := runCommand(t, []string{"E2E_JUDGE_API_KEY=sk-e2e-recording"}, eval, "-traces", rec.file, "-config", rec.config,
		"-judge", "openai:e2e-judge", "-base-url", rec.judgeURL, "-api-key-env", "E2E_JUDGE_API_KEY", "-progress", "0")
	f := reportRow(t, out, "all", "openai:e2e-judge")
	if f[reportSpans] != fmt.Sprint(len(rec.want)) || f[reportKappa] != "1.000" || f[reportCPMAE] != "0.000" || f[reportF1] != "1.000" {
		t.Fatalf("the recording's judge on the recording: %v, want %d spans, kappa 1, CP MAE 0", f, len(rec.want))
	}
	for _, ds := range []string{"good-ranking", "bad-ranking", "openinference", "slow-judgement", "landmarks"} {
		if f := reportRow(t, out, ds, "openai:e2e-judge"); f[reportSpans] != "1" || f[reportCPMAE] != "0.000" {
			t.Errorf("%s: %v", ds, f)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("%d scored; %d of them compared\n", len(rec.want), len(rec.want)),
		"openai:e2e-judge has the recorded judge_version",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRecordedTrafficBackfill: a recording sent by ragreplay through a
// collector running examples/replay.yaml as it is, configured by its
// environment variables, is scored again by the candidate judge and
// written to a file of its own, span for span; ragprecision-eval -against
// then compares it with the recording.
func TestRecordedTrafficBackfill(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	replay := buildCommand(t, "ragreplay")
	eval := buildCommand(t, "ragprecision-eval")
	rec := recordTraffic(t, bin)

	// The candidate calls a chunk relevant when it names the Louvre.
	candidate := chattest.NewServer(chattest.KeywordJudge("Louvre"))
	defer candidate.Close()
	out := filepath.Join(t.TempDir(), "replayed.json")
	ports := collector{grpc: freePort(t), http: freePort(t), metrics: freePort(t), health: freePort(t)}
	example, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "replay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := launchCollector(t, bin, string(example), ports.health,
		"REPLAY_JUDGE_MODEL=openai:candidate", "REPLAY_JUDGE_BASE_URL="+candidate.URL, "REPLAY_JUDGE_API_KEY=sk-e2e-candidate",
		"REPLAY_OUTPUT="+out, "REPLAY_OTLP_GRPC_ENDPOINT=127.0.0.1:"+ports.grpc, "REPLAY_OTLP_HTTP_ENDPOINT=127.0.0.1:"+ports.http,
		"REPLAY_HEALTH_ENDPOINT=127.0.0.1:"+ports.health, "REPLAY_METRICS_PORT="+ports.metrics)
	sent := runCommand(t, nil, replay, "-protocol", "http", "-endpoint", "127.0.0.1:"+ports.http, "-rate", "200", "-batch", "4", "-progress", "0", rec.file)
	if !strings.Contains(sent, fmt.Sprintf("Replayed %d spans (%d stripped", rec.spans, len(rec.want))) {
		t.Fatalf("ragreplay: %s", sent)
	}
	waitForFileSpans(t, out, rec.spans, 30*time.Second)
	c.stop(t)

	// Every span is back, with its IDs; the retrievals scored by the
	// candidate, as it judges.
	replayed := readRecording(t, out)
	if n := countSpans(replayed); n != rec.spans {
		t.Fatalf("%d spans in the replay, %d recorded", n, rec.spans)
	}
	recordedBySpan := map[string]recording.Result{}
	for _, td := range readRecording(t, rec.file) {
		forEachSpanOf(td, func(s ptrace.Span) { recordedBySpan[s.SpanID().String()] = recording.ResultOf(s) })
	}
	reader := config.NewSpanReader(config.Default())
	var agreement evalset.Tally
	scored := 0
	for _, td := range replayed {
		forEachSpanOf(td, func(s ptrace.Span) {
			was, ok := recordedBySpan[s.SpanID().String()]
			if !ok {
				t.Errorf("span %s (%s) was not recorded", s.SpanID(), s.Name())
				return
			}
			r := recording.ResultOf(s)
			if r.Selected() != was.Selected() {
				t.Errorf("span %s: status %q in the replay, %q recorded", s.Name(), r.Status, was.Status)
				return
			}
			if !r.Scored() {
				return
			}
			scored++
			c := ptrace.NewSpan()
			s.CopyTo(c)
			recording.Strip(c)
			d, _ := reader.Recognise(c)
			ret, err := reader.Read(c, d)
			if err != nil {
				t.Errorf("span %s: %v", s.Name(), err)
				return
			}
			want := make([]bool, len(ret.Chunks))
			for i, chunk := range ret.Chunks {
				want[i] = strings.Contains(chunk, "Louvre")
			}
			if r.Judge != "openai:candidate" || fmt.Sprint(r.Verdicts) != fmt.Sprint(want) || r.ReferenceSource != was.ReferenceSource {
				t.Errorf("span %s: judged by %s %v against the %s, want the candidate's %v against the %s",
					s.Name(), r.Judge, r.Verdicts, r.ReferenceSource, want, was.ReferenceSource)
			}
			if err := agreement.Add(r.Verdicts, was.Verdicts); err != nil {
				t.Errorf("span %s: %v", s.Name(), err)
			}
		})
	}
	if scored != len(rec.want) {
		t.Fatalf("%d spans scored in the replay, %d recorded", scored, len(rec.want))
	}

	report := runCommand(t, nil, eval, "-traces", out, "-against", rec.file, "-config", rec.config)
	m := agreement.Metrics()
	f := reportRow(t, report, "all", "openai:candidate")
	if f[reportSpans] != fmt.Sprint(len(rec.want)) || f[reportF1] != fmt.Sprintf("%.3f", m.F1) ||
		f[reportKappa] != fmt.Sprintf("%.3f", m.Kappa) || f[reportCPMAE] != fmt.Sprintf("%.3f", m.CPMAE) {
		t.Fatalf("compared: %v, want %d spans, F1 %.3f, kappa %.3f, CP MAE %.3f", f, len(rec.want), m.F1, m.Kappa, m.CPMAE)
	}
	if m.CPMAE == 0 {
		t.Fatal("the candidate agrees with the recording everywhere: the comparison shows nothing")
	}
	if strings.Contains(report, "not in -traces") {
		t.Errorf("the replay lost spans:\n%s", report)
	}
}
