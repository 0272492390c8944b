package judge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A batched reply that breaks the contract is asked again chunk by chunk.
// If the judgement that owned those units is cancelled while one of them is
// in flight, the others are orphaned; when the one in flight then succeeds,
// the flight is left in e.flights with positions nobody will ever decide.
// A later identical judgement attaches to it and waits forever.
func TestSplitFlightOrphanedWhileOneUnitRunsIsNotLeaked(t *testing.T) {
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	var calls atomic.Int32
	be := &scriptBackend{f: func(ctx context.Context, chunks []string) ([]Verdict, Usage, error) {
		switch n := calls.Add(1); {
		case n == 1:
			return nil, Usage{}, NewError(ReasonBadReply, 0, "") // batched reply broken: split
		case n == 2:
			entered <- struct{}{}
			<-release // the first chunk's request is in flight while its owner is cancelled
		}
		return allRelevant(chunks), Usage{}, nil
	}}
	s := testSettings()
	s.MaxConcurrency = 1
	s.MaxRetries = 0
	e := testEngine(t, s, be)
	req := Request{Reference: "r", Chunks: []string{"a", "b", "c"}}

	tk, err := e.Admit(req, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	tk.Commit(func(_ Result, err error) { first <- err })
	<-entered
	tk.Cancel(ErrDeadline)
	if err := <-first; !errors.Is(err, ErrDeadline) {
		t.Fatalf("first: %v", err)
	}
	close(release)
	if s := waitIdle(t, e); s.flights != 0 {
		t.Errorf("after the only judgement ended: %v", s)
	}

	// The same retrieval again: it must be judged, not wait on the leftover.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := e.Judge(ctx, req); err != nil {
		t.Fatalf("second identical judgement: %v (engine %v)", err, stateOf(e))
	}
}
