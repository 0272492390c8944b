package ragprecisionprocessor

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// A judge outage reads as one: with the default budget, a judge
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
