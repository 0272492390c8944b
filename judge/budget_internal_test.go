package judge

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The budget pays for every request sent: after judgements end with no time
// passing, the bucket holds what it started with less the requests sent.
// Admit reserves one token per distinct key not in flight, but the
// scheduler refunds one for every group answered by a flight, reserved or
// not (a chunk repeated in the retrieval, or a key that was in flight at
// Admit), and sends the groups left over with no token at all.
func TestBudgetPaysForEveryRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, e *Engine, gate chan struct{})
	}{
		{"repeated chunk", func(t *testing.T, e *Engine, gate chan struct{}) {
			tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "a", "b"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			tk.Commit(func(_ Result, err error) { done <- err })
			for stateOf(e).running < 2 { // "a" once, "b"
				time.Sleep(time.Millisecond)
			}
			close(gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}},
		{"in flight at Admit, done by Commit", func(t *testing.T, e *Engine, gate chan struct{}) {
			first, err := e.Admit(Request{Reference: "r", Chunks: []string{"a"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			firstDone := make(chan struct{})
			first.Commit(func(Result, error) { close(firstDone) })
			for stateOf(e).running == 0 {
				time.Sleep(time.Millisecond)
			}
			second, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "b"}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			close(gate)
			<-firstDone
			waitIdle(t, e)
			done := make(chan error, 1)
			second.Commit(func(_ Result, err error) { done <- err })
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			var sent atomic.Int32
			be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
				<-gate
				sent.Add(1)
				return allRelevant(chunks), Usage{}, nil
			}}
			s := testSettings()
			s.MaxRequestsPerSecond = 5
			e := testEngine(t, s, be, WithClock(stoppedClock{}))
			tc.run(t, e, gate)
			waitIdle(t, e)
			if got, want := budgetTokens(e), 5-float64(sent.Load()); got != want {
				t.Fatalf("%d requests sent, bucket holds %v tokens, want %v", sent.Load(), got, want)
			}
		})
	}
}
