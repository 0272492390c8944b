package judge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
)

// A judge that keeps failing opens the breaker: new judgements are refused
// at once with the failure's reason (not as budget or timeout), queued ones
// fail with it, the observer hears of it once, and a probe closes it again.
func TestBreakerOpensOnOutageAndProbeCloses(t *testing.T) {
	be := &judge.SlowBackend{Latency: time.Millisecond}
	be.Fail.Store(judge.NewError(judge.ReasonUnreachable, 0, "connection refused"))
	clock := judgetest.NewManualClock()
	obs := judgetest.NewRecordingObserver()
	s := judgetest.NewLLM("").Settings
	s.MaxRetries = 0
	e := judgetest.New(t, be, s, noJitter, judge.WithClock(clock), judge.WithObserver(obs))
	req := func(i int) judge.Request {
		return judge.Request{Reference: "r", Chunks: []string{"c" + strings.Repeat("x", i)}}
	}
	for i := range judge.BreakerThreshold {
		_, err := e.Judge(context.Background(), req(i))
		if judge.ReasonOf(err) != judge.ReasonUnreachable {
			t.Fatalf("judgement %d: %v", i, err)
		}
	}
	if h := obs.Snapshot().Health; len(h) != 1 || judge.ReasonOf(h[0]) != judge.ReasonUnreachable {
		t.Fatalf("health reports %v, want one unreachable", h)
	}
	sent := be.Attempts.Load()
	_, err := e.Admit(req(100), 0)
	if judge.ReasonOf(err) != judge.ReasonUnreachable || !strings.Contains(err.Error(), "not asked again until a probe succeeds") {
		t.Fatalf("while open: %v", err)
	}
	if be.Attempts.Load() != sent {
		t.Fatal("a refused judgement was sent")
	}
	// The probe is due after a second; the judge has recovered.
	clock.Advance(judge.FirstProbeAfter)
	be.Fail.Store(nil)
	if _, err := e.Judge(context.Background(), req(101)); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if h := obs.Snapshot().Health; len(h) != 2 || h[1] != nil {
		t.Fatalf("health reports %v, want a recovery", h)
	}
	if _, err := e.Judge(context.Background(), req(102)); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

// Only one probe at a time goes through while the breaker is open; a failed
// probe keeps it open and backs off.
func TestBreakerLetsOneProbeThrough(t *testing.T) {
	be := &judge.SlowBackend{Latency: time.Millisecond}
	be.Fail.Store(judge.NewError(judge.ReasonServerError, 503, ""))
	clock := judgetest.NewManualClock()
	s := judgetest.NewLLM("").Settings
	s.MaxRetries = 0
	e := judgetest.New(t, be, s, noJitter, judge.WithClock(clock))
	for i := range judge.BreakerThreshold {
		_, _ = e.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{strings.Repeat("a", i+1)}})
	}
	clock.Advance(judge.FirstProbeAfter)
	probe, err := e.Admit(judge.Request{Reference: "r", Chunks: []string{"p1"}}, 0)
	if err != nil {
		t.Fatalf("probe refused: %v", err)
	}
	if _, err := e.Admit(judge.Request{Reference: "r", Chunks: []string{"p2"}}, 0); judge.ReasonOf(err) != judge.ReasonServerError {
		t.Fatalf("a second judgement during the probe: %v", err)
	}
	done := make(chan error, 1)
	probe.Commit(func(_ judge.Result, err error) { done <- err })
	if err := <-done; judge.ReasonOf(err) != judge.ReasonServerError {
		t.Fatalf("probe: %v", err)
	}
	if _, err := e.Admit(judge.Request{Reference: "r", Chunks: []string{"p3"}}, 0); err == nil {
		t.Fatal("the breaker closed although the probe failed")
	}
}
