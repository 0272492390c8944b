package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/recording"
)

// fakeClock moves only when the replay sleeps.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	return ctx.Err()
}

func (c *fakeClock) elapsed(from time.Time) time.Duration { return c.Now().Sub(from) }

// recordedLine is one line of a recording: spans spans of one trace each,
// the first of them scored by the processor (attributes and event).
func recordedLine(t *testing.T, first byte, spans int) string {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "rag-api")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("app")
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetName("retrieve")
		s.SetTraceID(pcommon.TraceID{first, byte(i)})
		s.SetSpanID(pcommon.SpanID{first, byte(i)})
		s.Attributes().PutStr("rag.query", "q")
		if i == 0 {
			s.Attributes().PutStr(ragattr.Status, ragattr.StatusScored)
			s.Attributes().PutDouble(ragattr.Precision, 1)
			s.Attributes().PutStr(ragattr.RetrievalOutcome, "ideal")
			ev := s.Events().AppendEmpty()
			ev.SetName(ragattr.EvaluationEvent)
			ev.Attributes().PutStr(ragattr.EvaluationName, ragattr.ContextualPrecision)
		}
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeRecording(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "recorded.json")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runReplay(t *testing.T, clk clock, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"-progress", "0"}, args...), &stdout, &stderr, clk)
	return stdout.String(), stderr.String(), err
}

// received returns the spans a sink got, by span ID, and the number of
// requests.
func received(sink *otlpsink.Sink) (map[pcommon.SpanID]ptrace.Span, int) {
	out := map[pcommon.SpanID]ptrace.Span{}
	all := sink.Traces()
	for _, td := range all {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				for k := 0; k < sss.At(j).Spans().Len(); k++ {
					s := sss.At(j).Spans().At(k)
					out[s.SpanID()] = s
				}
			}
		}
	}
	return out, len(all)
}

// Every span of the recording arrives once, with its IDs, resource and
// scope, without the processor's annotations, in requests of at most
// -batch spans; a bad line is skipped and reported.
func TestReplayGRPC(t *testing.T) {
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	rec := writeRecording(t, recordedLine(t, 1, 5), "not json", recordedLine(t, 2, 2))
	out, _, err := runReplay(t, newFakeClock(), "-endpoint", sink.Addr(), "-batch", "2", rec)
	if err != nil {
		t.Fatal(err)
	}
	got, requests := received(sink)
	if len(got) != 7 || requests != 4 {
		t.Fatalf("%d spans in %d requests, want 7 in 4 (5 as 2+2+1, then 2)", len(got), requests)
	}
	for _, s := range got {
		if recording.ResultOf(s).Selected() || s.Events().Len() != 0 {
			t.Fatalf("span %s still has annotations: %v", s.SpanID(), s.Attributes().AsRaw())
		}
		if _, ok := s.Attributes().Get(ragattr.RetrievalOutcome); ok {
			t.Fatal("the diagnostics are still on")
		}
		if s.TraceID()[0] != s.SpanID()[0] || s.Attributes().Len() != 1 {
			t.Fatalf("span %s changed: trace %s, %v", s.SpanID(), s.TraceID(), s.Attributes().AsRaw())
		}
	}
	for _, want := range []string{"Replayed 7 spans (2 stripped of the processor's annotations) from 2 lines in 4 requests to grpc://" + sink.Addr(),
		"1 lines are not OTLP JSON traces and were skipped (first: " + rec + ":2: "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q: %s", want, out)
		}
	}
}

// OTLP/HTTP, and -keep-annotations sends the spans as recorded.
func TestReplayHTTPKeepAnnotations(t *testing.T) {
	sink, err := otlpsink.StartHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	rec := writeRecording(t, recordedLine(t, 1, 3))
	out, _, err := runReplay(t, newFakeClock(), "-protocol", "http", "-endpoint", sink.Addr(), "-keep-annotations", rec)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := received(sink)
	if len(got) != 3 || !recording.ResultOf(got[pcommon.SpanID{1, 0}]).Scored() {
		t.Fatalf("%d spans; the scored one: %v", len(got), got[pcommon.SpanID{1, 0}].Attributes().AsRaw())
	}
	if !strings.Contains(out, "Replayed 3 spans (0 stripped") || !strings.Contains(out, "http://"+sink.Addr()+"/v1/traces") {
		t.Errorf("summary %s", out)
	}
}

// -rate paces the requests: spans are sent no sooner than they are due,
// so that the replay takes spans/rate, less the last batch.
func TestReplayRate(t *testing.T) {
	sink, err := otlpsink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	var lines []string
	for i := range 10 {
		lines = append(lines, recordedLine(t, byte(i+1), 10))
	}
	clk := newFakeClock()
	start := clk.Now()
	out, _, err := runReplay(t, clk, "-endpoint", sink.Addr(), "-rate", "50", writeRecording(t, lines...))
	if err != nil {
		t.Fatal(err)
	}
	// 100 spans at 50/s: the last batch of 10 is due at 90/50 = 1.8s.
	if got := clk.elapsed(start); got != 1800*time.Millisecond {
		t.Fatalf("took %v of the clock, want 1.8s (sleeps %v)", got, clk.sleeps)
	}
	if !strings.Contains(out, "(55.6 spans/s)") {
		t.Errorf("summary %s", out)
	}
	if n := sink.SpanCount(); n != 100 {
		t.Fatalf("%d spans arrived", n)
	}
}

// refusingServer refuses the first refusals exports with code, then
// accepts; it checks the -header metadata.
type refusingServer struct {
	ptraceotlp.UnimplementedGRPCServer
	mu       sync.Mutex
	code     codes.Code
	refusals int
	calls    int
	spans    int
	header   string
}

func (s *refusingServer) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-tenant"); len(v) == 1 {
		s.header = v[0]
	}
	if s.calls <= s.refusals {
		return ptraceotlp.NewExportResponse(), status.Error(s.code, "not now")
	}
	s.spans += req.Traces().SpanCount()
	return ptraceotlp.NewExportResponse(), nil
}

func startRefusing(t *testing.T, code codes.Code, refusals int) (*refusingServer, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rs := &refusingServer{code: code, refusals: refusals}
	ptraceotlp.RegisterGRPCServer(srv, rs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return rs, lis.Addr().String()
}

// A batch refused for now (the memory_limiter's Unavailable) is sent again
// with backoff, and arrives once; past -give-up, or refused for good, the
// replay stops with the error.
func TestReplayRetries(t *testing.T) {
	rec := writeRecording(t, recordedLine(t, 1, 4))
	rs, addr := startRefusing(t, codes.Unavailable, 2)
	clk := newFakeClock()
	out, _, err := runReplay(t, clk, "-endpoint", addr, "-header", "x-tenant=acme", rec)
	if err != nil {
		t.Fatal(err)
	}
	if rs.spans != 4 || rs.calls != 3 || rs.header != "acme" {
		t.Fatalf("%d spans in %d calls, header %q", rs.spans, rs.calls, rs.header)
	}
	if len(clk.sleeps) != 2 || clk.sleeps[0] != firstRetry || clk.sleeps[1] != 2*firstRetry {
		t.Fatalf("backoff %v", clk.sleeps)
	}
	if !strings.Contains(out, "2 requests refused for now and sent again") {
		t.Errorf("summary %s", out)
	}

	_, addr = startRefusing(t, codes.ResourceExhausted, 1000)
	if _, _, err := runReplay(t, newFakeClock(), "-endpoint", addr, "-give-up", "1s", rec); err == nil || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("past -give-up: %v", err)
	}
	rs, addr = startRefusing(t, codes.InvalidArgument, 1000)
	if _, _, err := runReplay(t, newFakeClock(), "-endpoint", addr, rec); err == nil || !strings.Contains(err.Error(), "InvalidArgument") || rs.calls != 1 {
		t.Fatalf("refused for good: %v after %d calls", err, rs.calls)
	}
}

// OTLP/HTTP: 503 is retried, 400 stops the replay with the receiver's
// message, a partial success's rejected spans are counted and fail it.
func TestReplayHTTPRefusals(t *testing.T) {
	rec := writeRecording(t, recordedLine(t, 1, 2))
	var mu sync.Mutex
	calls := 0
	reply := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf":
			http.Error(w, "wrong request", http.StatusNotFound)
		case n == 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case strings.Contains(r.Header.Get("X-Case"), "bad"):
			http.Error(w, "malformed spans", http.StatusBadRequest)
		case strings.Contains(r.Header.Get("X-Case"), "partial"):
			resp := ptraceotlp.NewExportResponse()
			resp.PartialSuccess().SetRejectedSpans(1)
			b, _ := resp.MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(b)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(reply))
	defer srv.Close()
	if _, _, err := runReplay(t, newFakeClock(), "-protocol", "http", "-endpoint", srv.URL, rec); err != nil || calls != 2 {
		t.Fatalf("503 then 200: %v after %d calls", err, calls)
	}
	calls = 0
	_, _, err := runReplay(t, newFakeClock(), "-protocol", "http", "-endpoint", srv.URL, "-header", "X-Case=bad", rec)
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request: malformed spans") {
		t.Fatalf("400: %v", err)
	}
	calls = 0
	out, _, err := runReplay(t, newFakeClock(), "-protocol", "http", "-endpoint", srv.URL+"/v1/traces", "-header", "X-Case=partial", rec)
	if err == nil || !strings.Contains(err.Error(), "rejected 1 spans") || !strings.Contains(out, "the receiver rejected 1 spans") {
		t.Fatalf("partial success: %v\n%s", err, out)
	}
}

// split keeps the order of spans and gives each its resource and scope.
func TestSplit(t *testing.T) {
	td := ptrace.NewTraces()
	for r := range 2 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutInt("r", int64(r))
		for sc := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(string(rune('a' + sc)))
			for range 2 - sc + r {
				ss.Spans().AppendEmpty().SetName("span")
			}
		}
	}
	// Resource 0: scopes a (2 spans), b (1); resource 1: a (3), b (2).
	var order []string
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
			ss := rss.At(i).ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				ss.Spans().At(k).SetName(string(rune('0' + len(order))))
				order = append(order, ss.Spans().At(k).Name())
			}
		}
	}
	parts := split(td, 3)
	var got []string
	var sizes []int
	for _, p := range parts {
		sizes = append(sizes, p.SpanCount())
		rss := p.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			r, _ := rss.At(i).Resource().Attributes().Get("r")
			for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
				ss := rss.At(i).ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					got = append(got, ss.Spans().At(k).Name())
					if n := ss.Spans().At(k).Name()[0] - '0'; (n < 3) != (r.Int() == 0) || (ss.Scope().Name() == "b") != (n == 2 || n >= 6) {
						t.Fatalf("span %d with resource %d, scope %s", n, r.Int(), ss.Scope().Name())
					}
				}
			}
		}
	}
	if strings.Join(got, "") != strings.Join(order, "") || len(sizes) != 3 || sizes[0] != 3 || sizes[1] != 3 || sizes[2] != 2 {
		t.Fatalf("order %v, sizes %v", got, sizes)
	}
	if len(split(ptrace.NewTraces(), 3)) != 0 || len(split(td, 8)) != 1 {
		t.Fatal("an empty line, or one small enough")
	}
}

func TestFlags(t *testing.T) {
	rec := writeRecording(t, recordedLine(t, 1, 1))
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name the recording"},
		{[]string{"-protocol", "udp", rec}, "-protocol"},
		{[]string{"-rate", "-1", rec}, "-rate"},
		{[]string{"-batch", "0", rec}, "-batch"},
		{[]string{"-header", "novalue", rec}, "KEY=VALUE"},
		{[]string{"-endpoint", "http://x:4317", rec}, "host:port for grpc"},
		{[]string{"-protocol", "http", "-endpoint", "ftp://x", rec}, "http:// or https://"},
		{[]string{filepath.Join(t.TempDir(), "missing.json")}, "no such file"},
	} {
		if _, _, err := runReplay(t, newFakeClock(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
