package judge

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A judgement decided at admission (Decided) has its done called before
// Commit returns, even while other goroutines drain: the processor relies on
// it to annotate the span in place, in its batch, before the batch goes on.
func TestDecidedCommitCallsDoneBeforeReturning(t *testing.T) {
	be := newChaosBackend(true, 0, 1)
	s := testSettings()
	s.MaxConcurrency = 4
	s.CacheSize = 1000
	e := testEngine(t, s, be)
	cached := Request{Reference: "r", Chunks: []string{"yes cached"}}
	if _, err := e.Judge(context.Background(), cached); err != nil {
		t.Fatal(err)
	}
	// Other goroutines drain too: every Admit, Commit and Cancel does, as
	// do the workers after each request.
	stop := make(chan struct{})
	var bg sync.WaitGroup
	for range 2 {
		bg.Add(1)
		go func() {
			defer bg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"bg"}}, 0); err == nil {
					tk.Abandon()
				}
			}
		}()
	}
	defer func() { close(stop); bg.Wait() }()
	late := 0
	const tries = 20000
	for range tries {
		tk, err := e.Admit(cached, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !tk.Decided() {
			t.Fatal("not decided from the cache")
		}
		var called atomic.Bool
		tk.Commit(func(Result, error) { called.Store(true) })
		if !called.Load() {
			late++
		}
	}
	if late > 0 {
		t.Fatalf("%d of %d decided commits returned before calling done", late, tries)
	}
}

// The caller's deadline timer may fire between Admit and Commit: its Cancel
// must not be lost, or the judgement outlives its deadline behind other
// judgements' requests.
func TestCancelBeforeCommitIsKept(t *testing.T) {
	be := &scriptBackend{perChunk: true, f: func(_ context.Context, chunks []string) ([]Verdict, Usage, error) {
		return allRelevant(chunks), Usage{}, nil
	}}
	s := testSettings()
	s.MaxRequestsPerSecond = 5
	e := testEngine(t, s, be, WithClock(stoppedClock{}))
	tk, err := e.Admit(Request{Reference: "r", Chunks: []string{"a", "b"}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tk.Cancel(ErrDeadline)
	done := make(chan error, 1)
	tk.Commit(func(_ Result, err error) { done <- err })
	if err := <-done; !errors.Is(err, ErrDeadline) {
		t.Fatalf("err %v, want the ErrDeadline given to Cancel before Commit", err)
	}
	waitIdle(t, e)
	if got := budgetTokens(e); got != 5 {
		t.Fatalf("bucket holds %v, want its 5 tokens back", got)
	}
}
