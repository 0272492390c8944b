package judge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// Close ends every judgement at once, including requests in flight.
func TestCloseEndsJudgementsInFlight(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Delay: 10 * time.Second} })
	c := judgetest.NewLLM(srv.URL)
	be, err := openai.New(c.Options)
	if err != nil {
		t.Fatal(err)
	}
	j, err := judge.New(be, c.Settings)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for i := range 3 {
		go func() {
			_, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{strings.Repeat("c", i+1)}})
			done <- err
		}()
	}
	for srv.Calls() < 3 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { _ = j.Close(); close(closed) }()
	for range 3 {
		if err := <-done; !errors.Is(err, judge.ErrClosed) {
			t.Fatalf("err %v, want judge.ErrClosed", err)
		}
	}
	<-closed
}

// Every request the observer counts reached the server, and every request
// the server received was counted, whatever ends the judgements: one whose
// deadline passes while it waits for a slot was never a request.
func TestRequestsCountedAreRequestsSent(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("x")(n, r)
		if n%2 == 0 {
			rep = chattest.Reply{Status: 503}
		}
		rep.Delay = 60 * time.Millisecond
		return rep
	})
	c := judgetest.NewLLM(srv.URL)
	c.MaxConcurrency = 1
	c.MaxRetries = 1
	c.CacheSize = 0
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithObserver(obs), judge.WithJitter(func() float64 { return 0 }))
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 330*time.Millisecond)
			defer cancel()
			_, _ = j.Judge(ctx, judge.Request{Reference: "r", Chunks: []string{"x" + strings.Repeat("a", i)}})
		})
	}
	wg.Wait()
	_ = j.Close()
	s := obs.Snapshot()
	total := 0
	for _, n := range s.Outcomes {
		total += n
	}
	t.Logf("outcomes %v, server calls %d", s.Outcomes, srv.Calls())
	if int64(total) != srv.Calls() {
		t.Fatalf("observer counted %d requests (%v), the server received %d", total, s.Outcomes, srv.Calls())
	}
	if srv.Calls() > 7 {
		t.Fatalf("%d requests for 12 judgements that 1 slot can serve ~5 of in time", srv.Calls())
	}
}

// A chunk with no text is not relevant and costs no request; its reason
// says why.
func TestEmptyChunksAreNotSent(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	j := judgetest.NewLLM(srv.URL).New(t)
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x", "", "  \n\t", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := judgetest.Relevant(res); got[0] != true || got[1] || got[2] || got[3] {
		t.Fatalf("verdicts %v", got)
	}
	if res.Verdicts[1].Reason != judge.EmptyChunkReason || res.Verdicts[2].Reason != judge.EmptyChunkReason {
		t.Fatalf("reasons %+v", res.Verdicts)
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d calls, want 2 (the empty chunks are not sent)", srv.Calls())
	}
	// All empty: no request at all.
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{""}}); err != nil || srv.Calls() != 2 {
		t.Fatalf("%v, %d calls", err, srv.Calls())
	}
}

func TestEmptyRequestMakesNoCall(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	j := judgetest.NewLLM(srv.URL).New(t)
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r"})
	if err != nil || len(res.Verdicts) != 0 || srv.Calls() != 0 {
		t.Fatalf("%+v %v %d", res, err, srv.Calls())
	}
}

// The caller's deadline ends the judgement with the context's error, so that
// the processor can tell a timeout from a judge failure.
func TestCallerDeadline(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Delay: 10 * time.Second} })
	j := judgetest.NewLLM(srv.URL).New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := j.Judge(ctx, judge.Request{Reference: "r", Chunks: []string{"x", "y"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("x")(n, r)
		rep.Delay = 20 * time.Millisecond
		return rep
	})
	c := judgetest.NewLLM(srv.URL)
	c.MaxConcurrency = 2
	c.CacheSize = 0
	j := c.New(t)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			chunks := []string{"a", "b", "c", "d"}
			for k := range chunks {
				chunks[k] += fmt.Sprint(i) // distinct, so that none is de-duplicated
			}
			if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: chunks}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := srv.MaxInFlight(); m > 2 || m < 1 {
		t.Fatalf("max concurrent requests %d, want <= MaxConcurrency 2", m)
	}
	if srv.Calls() != 12 {
		t.Fatalf("%d calls", srv.Calls())
	}
}

func TestTruncatesChunksAndKeepsUTF8(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("é"))
	c := judgetest.NewLLM(srv.URL)
	c.MaxChunkChars = 5
	j := c.New(t)
	long := strings.Repeat("é", 10_000) + "\xff\xfe"
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "ref", Chunks: []string{long, "ab\xffcd"}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range srv.Requests() {
		got[r.Block("CHUNK")] = true
	}
	if !got["ééééé"] || !got["ab\uFFFDcd"] {
		t.Fatalf("chunks sent: %v", got)
	}
}

// The cut applies to the reference as well as to the chunk.
func TestReferenceIsTruncated(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("Paris"))
	c := judgetest.NewLLM(srv.URL)
	c.MaxChunkChars = 5
	j := c.New(t)
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "Paris is the capital.", Chunks: []string{"Paris"}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Block("REFERENCE"); got != "Paris" {
		t.Fatalf("reference block %q, want it cut to 5 characters", got)
	}
}
