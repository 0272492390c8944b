package judge

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The fakes of the engine's white-box tests. SlowBackend is exported for
// the tests of package judge_test too, which cannot see unexported names.

// SlowBackend answers every chunk after a fixed real latency, counting the
// attempts it is paid for; Fail makes every attempt fail with a copy of the
// error stored.
type SlowBackend struct {
	Latency  time.Duration
	Attempts atomic.Int64
	Fail     atomic.Pointer[Error]
}

func (b *SlowBackend) ID() string        { return "test:slow" }
func (b *SlowBackend) PerChunk() bool    { return true }
func (b *SlowBackend) Inline() bool      { return false }
func (b *SlowBackend) CacheSalt() string { return b.ID() }
func (b *SlowBackend) Close()            {}

func (b *SlowBackend) Attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	b.Attempts.Add(1)
	t := time.NewTimer(b.Latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, Usage{}, Cancelled(ctx.Err(), true)
	}
	if e := b.Fail.Load(); e != nil {
		cp := *e
		return nil, Usage{}, &cp
	}
	out := make([]Verdict, len(chunks))
	for i, c := range chunks {
		out[i] = Verdict{Relevant: strings.Contains(c, "yes")}
	}
	return out, Usage{PromptTokens: 1}, nil
}

// scriptBackend runs a test's function for each attempt.
type scriptBackend struct {
	perChunk bool
	inline   bool
	f        func(ctx context.Context, chunks []string) ([]Verdict, Usage, error)
}

func (b *scriptBackend) ID() string        { return "test:script" }
func (b *scriptBackend) PerChunk() bool    { return b.perChunk }
func (b *scriptBackend) Inline() bool      { return b.inline }
func (b *scriptBackend) CacheSalt() string { return b.ID() }
func (b *scriptBackend) Close()            {}
func (b *scriptBackend) Attempt(ctx context.Context, _, _ string, chunks []string) ([]Verdict, Usage, error) {
	return b.f(ctx, chunks)
}

func allRelevant(chunks []string) []Verdict {
	out := make([]Verdict, len(chunks))
	for i := range out {
		out[i] = Verdict{Relevant: true}
	}
	return out
}

// testSettings are the engine settings of most tests: 4 requests in flight,
// 3 retries, no cache.
func testSettings() Settings {
	return Settings{MaxConcurrency: 4, MaxRetries: 3, MaxChunkChars: 4000}
}

// testEngine runs be under s with no backoff jitter, closed when the test
// ends.
func testEngine(t *testing.T, s Settings, be Backend, opts ...Option) *Engine {
	t.Helper()
	e, err := New(be, s, append([]Option{WithJitter(func() float64 { return 0 })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// stoppedClock is a clock at which no time passes.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }
func (stoppedClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// engineState is the engine's bookkeeping at one moment.
type engineState struct {
	flights, live, running, ready, delayed, queued int
}

func (s engineState) String() string {
	return fmt.Sprintf("flights %d, live %d, running %d, ready %d, delayed %d, queued %d",
		s.flights, s.live, s.running, s.ready, s.delayed, s.queued)
}

func stateOf(e *Engine) engineState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return engineState{len(e.flights), len(e.live), len(e.running), len(e.ready), len(e.delayed), e.queued}
}

// waitIdle waits until nothing runs or waits out a backoff, and returns the
// engine's state then.
func waitIdle(t *testing.T, e *Engine) engineState {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := stateOf(e)
		if s.running == 0 && s.delayed == 0 && s.live == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine never idle: %v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

func budgetTokens(e *Engine) float64 {
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	return e.budget.tokens
}
