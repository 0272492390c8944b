package ragprecisionprocessor

import (
	"context"
	"fmt"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
)

// A burst the judge cannot keep up with (defect 2 of the hardening issue):
// 100 spans of 3 chunks at once, 4 slots, max_wait ten judge latencies.
// Before, the chunk requests of all spans interleaved on the slots: 36
// replies were paid for and no span was scored. Now spans are judged whole,
// earliest deadline first: nearly every reply paid for belongs to a scored
// span, the spans scored approach what the slots allow in max_wait, and
// the rest go on at once with a status instead of waiting out max_wait.
func TestBurstIsJudgedSpanBySpan(t *testing.T) {
	const (
		spans   = 100
		chunks  = 3
		slots   = 4
		latency = 100 * time.Millisecond
		maxWait = 10 * latency
	)
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = latency
		return rep
	})
	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxConcurrency = slots
		c.Cache.Size = 0
		setMaxWait(c, maxWait)
	})
	b := newBatch("svc")
	for i := range spans {
		b.project(fmt.Sprintf("r%03d", i), "q", "Paris",
			fmt.Sprintf("Paris %d", i), fmt.Sprintf("Berlin %d", i), fmt.Sprintf("Paris again %d", i))
	}
	h.consume(b.td)
	h.waitSpans(spans)
	statuses := map[string]int{}
	for _, s := range h.spansByName() {
		statuses[attrStr(s, ragattr.Status)+"/"+attrStr(s, ragattr.Reason)]++
	}
	scored := statuses[ragattr.StatusScored+"/"]
	paid := srv.Calls()
	// What the slots allow in max_wait at the latency the judge really had
	// (the server's delay plus this machine's overhead, which a loaded
	// machine raises): the test holds the scheduler to that, not to a
	// clock.
	lat := histogram(t, h.tel, metricLatency)
	var sum float64
	var n uint64
	for _, dp := range lat.DataPoints {
		sum, n = sum+dp.Sum, n+dp.Count
	}
	measured := time.Duration(sum / float64(n) * float64(time.Second))
	capacity := float64(slots) * float64(maxWait) / float64(max(measured, latency)) / chunks
	t.Logf("statuses %v; %d judge replies paid for; goodput %.3f spans per reply (ideal %.3f); latency %s; capacity %.1f spans",
		statuses, paid, float64(scored)/float64(paid), 1.0/chunks, measured, capacity)
	if float64(scored) < 0.6*capacity {
		t.Errorf("%d spans scored, want close to the %.1f the slots allow in max_wait", scored, capacity)
	}
	if goodput := float64(scored) / float64(paid); goodput < 0.8/chunks {
		t.Errorf("goodput %.3f, want close to 1/%d", goodput, chunks)
	}
	h.shutdown(context.Background())
}

// statusHost records the component status the processor reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []componentstatus.Status
	for _, e := range h.events {
		out = append(out, e.Status())
	}
	return out
}

// A judge outage reads as one (defect 3): with the default budget, a judge
// answering 429 makes spans end judge_error with reason rate_limited, never
// budget; once it keeps failing, spans are refused at once with that reason,
// a warning says what failed, and the component reports a recoverable error
// until the judge answers again.
func TestOutageReadsAsOutage(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if down.Load() {
			return chattest.Reply{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0.01"}}
		}
		return chattest.KeywordJudge("Paris")(n, r)
	})
	core, logs := observer.New(zapcore.InfoLevel)
	host := &statusHost{Host: nopHost()}
	h := newHarnessFull(t, new(consumertest.TracesSink), zap.New(core), host, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.MaxRetries = 3
		c.Judge.MaxRequestsPerSecond = config.Default().Judge.MaxRequestsPerSecond
	})
	for round := range 8 {
		b := newBatch("svc")
		b.project(fmt.Sprintf("r%d", round), "q", "Paris", fmt.Sprintf("Paris %d", round))
		h.consume(b.td)
		h.waitSpans(round + 1)
	}
	for name, s := range h.spansByName() {
		if attrStr(s, ragattr.Status) != ragattr.StatusJudgeError || attrStr(s, ragattr.Reason) != string(judge.ReasonRateLimited) {
			t.Errorf("%s: status %q reason %q, want judge_error rate_limited", name, attrStr(s, ragattr.Status), attrStr(s, ragattr.Reason))
		}
	}
	if n := counterValue(t, h.tel, metricUnscored, map[string]string{labelStatus: ragattr.StatusBudget}); n != 0 {
		t.Errorf("%d spans reported as budget during an outage", n)
	}
	if n := counterValue(t, h.tel, metricUnscored, map[string]string{labelStatus: ragattr.StatusJudgeError, labelReason: "rate_limited"}); n != 8 {
		t.Errorf("unscored{judge_error, rate_limited} = %d, want 8", n)
	}
	if n := counterValue(t, h.tel, metricRequests, nil); n != srv.Calls() {
		t.Errorf("judge_requests %d, the judge received %d", n, srv.Calls())
	}
	if st := host.statuses(); len(st) == 0 || st[len(st)-1] != componentstatus.StatusRecoverableError {
		t.Fatalf("component status %v, want a recoverable error", st)
	}
	warned := false
	for _, e := range logs.All() {
		if e.Level >= zapcore.WarnLevel && e.ContextMap()["reason"] == "rate_limited" {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning names the rate limiting")
	}

	// The judge recovers: a probe goes through and spans are scored again.
	down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		b := newBatch("svc")
		b.project(fmt.Sprintf("after%d", i), "q", "Paris", fmt.Sprintf("Paris after %d", i))
		h.consume(b.td)
		h.waitSpans(9 + i)
		if attrStr(h.span(fmt.Sprintf("after%d", i)), ragattr.Status) == ragattr.StatusScored {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the judge recovered but spans are not scored")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := host.statuses(); st[len(st)-1] != componentstatus.StatusOK {
		t.Fatalf("component status %v, want OK after recovery", st)
	}
}

func nopHost() component.Host { return hostWithExtensions{} }

type hostWithExtensions struct {
	ext map[component.ID]component.Component
}

func (h hostWithExtensions) GetExtensions() map[component.ID]component.Component { return h.ext }

// Shutdown returns within shutdown_timeout plus a small constant whatever
// the next consumer does (defect 4), and counts what it could not forward.
func TestShutdownIsBoundedWithBlockingConsumer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		honorsCtx bool
	}{{"consumer waits for its context", true}, {"consumer ignores its context", false}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			sink := &blockingSink{release: release, honorsCtx: tc.honorsCtx}
			srv := chatServer(t, chattest.KeywordJudge("Paris"))
			h := newHarnessNext(t, sink, &sink.TracesSink, func(c *config.Config) {
				llmJudge(srv.URL)(c)
				c.ShutdownTimeout = 100 * time.Millisecond
			})
			b := newBatch("svc")
			b.project("retrieve", "q", "Paris", capitalChunks...)
			b.plain("plain")
			sink.block.Store(false)
			h.consume(b.td) // the plain span goes on at once
			sink.block.Store(true)
			sink.waitBlocked(t)
			start := time.Now()
			if err := h.p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 100*time.Millisecond+shutdownGrace+400*time.Millisecond {
				t.Fatalf("Shutdown took %s with shutdown_timeout 100ms", took)
			}
			if n := counterValue(t, h.tel, metricDropped, map[string]string{labelReason: dropShutdown}); n != 1 {
				t.Fatalf("dropped{shutdown} = %d, want the one span the consumer held", n)
			}
		})
	}
}

// blockingSink blocks every call while block is set: until its context
// ends, or, when it ignores its context, until release.
type blockingSink struct {
	consumertest.TracesSink
	block     atomic.Bool
	honorsCtx bool
	release   chan struct{}
	blocked   atomic.Int64
}

func (s *blockingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if !s.block.Load() {
		return s.TracesSink.ConsumeTraces(ctx, td)
	}
	s.blocked.Add(1)
	if s.honorsCtx {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.release:
		}
	} else {
		<-s.release
	}
	return fmt.Errorf("downstream gave up")
}

func (s *blockingSink) waitBlocked(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.blocked.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the held span never reached the consumer")
		}
		time.Sleep(time.Millisecond)
	}
}

// A judge or gateway that echoes the request in its error reply does not
// put the key, header values or span content into the log (defect 6).
func TestEchoingJudgeLeaksNothing(t *testing.T) {
	const (
		key    = "sk-echo-secret-1234567890"
		header = "gw-header-secret-value"
		chunk  = "CONFIDENTIAL chunk about the merger in Paris"
	)
	replies := []func(r chattest.Request) chattest.Reply{
		func(r chattest.Request) chattest.Reply { // 401 quoting the credentials
			return chattest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + r.Header.Get("Authorization") + ` (` + r.Header.Get("X-Gateway-Key") + `)","type":"invalid_request_error"}}`}
		},
		func(r chattest.Request) chattest.Reply { // 400 quoting the request
			body, _ := jsonString(r.User())
			return chattest.Reply{Status: 400, Body: `{"error":{"message":"could not parse messages: ` + body + `"}}`}
		},
		func(r chattest.Request) chattest.Reply { // an HTML gateway page echoing everything
			return chattest.Reply{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1><pre>Authorization: " + r.Header.Get("Authorization") +
				"\nX-Gateway-Key: " + r.Header.Get("X-Gateway-Key") + "\n" + r.User() + "</pre></body></html>"}
		},
	}
	for i, reply := range replies {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := chatServer(t, func(_ int, r chattest.Request) chattest.Reply { return reply(r) })
			core, logs := observer.New(zapcore.DebugLevel)
			h := newHarnessLogged(t, zap.New(core), func(c *config.Config) {
				llmJudge(srv.URL)(c)
				c.Judge.APIKey = key
				c.Judge.ClientConfig.Headers = append(c.Judge.ClientConfig.Headers, configopaquePair("X-Gateway-Key", header))
			})
			b := newBatch("svc")
			b.project("retrieve", "SECRET question", "PRIVATE reference", chunk)
			h.consume(b.td)
			h.waitSpans(1)
			expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
			if logs.Len() == 0 {
				t.Fatal("the failure was not logged")
			}
			expectLogsFree(t, logs, key, key[:12], header, "CONFIDENTIAL", "merger", "SECRET question", "PRIVATE reference")
		})
	}
}

// An empty chunk keeps its rank, is not relevant, costs no request, and the
// event says why (defect 8).
func TestEmptyChunkIsExplained(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", "Paris is the capital.", "", "Paris again.")
	h.consume(b.td)
	h.waitSpans(1)
	s := h.span("retrieve")
	if v, _ := s.Attributes().Get(ragattr.Precision); attrStr(s, ragattr.Status) != ragattr.StatusScored || math.Abs(v.Double()-5.0/6.0) > 1e-12 {
		t.Fatalf("attributes %v", s.Attributes().AsRaw())
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d judge requests, want 2: the empty chunk is not sent", srv.Calls())
	}
	expl, _ := s.Events().At(0).Attributes().Get(ragattr.EvaluationExplanation)
	if !strings.Contains(expl.Str(), "empty, so not relevant without asking the judge: rank 2") {
		t.Fatalf("explanation %q", expl.Str())
	}
}

// builtin:lexical judges in place: the span is scored within the same
// ConsumeTraces call and goes on in its own batch.
func TestBuiltinJudgesInPlace(t *testing.T) {
	h := newHarness(t, nil)
	b := newBatch("svc")
	b.plain("before")
	b.project("retrieve", "What is the capital of France?", "Paris", capitalChunks...)
	b.plain("after")
	h.consume(b.td)
	all := h.sink.AllTraces()
	if len(all) != 1 || all[0].SpanCount() != 3 {
		t.Fatalf("%d forwards; want the batch whole, at once", len(all))
	}
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q", got)
	}
	if h.p.held != 0 {
		t.Fatalf("%d spans held", h.p.held)
	}
}

// The judge's HTTP client is the collector's: an authenticator extension
// named under judge.auth signs its requests.
func TestJudgeUsesAuthExtension(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	id := component.MustNewID("testauth")
	host := hostWithExtensions{ext: map[component.ID]component.Component{id: &headerAuth{header: "X-Signed", value: "by-extension"}}}
	h := newHarnessFull(t, new(consumertest.TracesSink), nil, host, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
	})
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", "Paris.")
	h.consume(b.td)
	h.waitSpans(1)
	if got := srv.Requests()[0].Header.Get("X-Signed"); got != "by-extension" {
		t.Fatalf("X-Signed %q: the auth extension was not used", got)
	}
}

// headerAuth is an authenticator extension adding one header.
type headerAuth struct {
	component.StartFunc
	component.ShutdownFunc
	header, value string
}

func (a *headerAuth) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set(a.header, a.value)
		return base.RoundTrip(r)
	}), nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
