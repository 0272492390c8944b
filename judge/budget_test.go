package judge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
)

// budgetedJudge is an LLM judge with a budget of 4 requests a second, no
// cache, and clock, against a server that calls chunks saying "x" relevant.
func budgetedJudge(t *testing.T, clock judge.Clock) (*judge.Engine, *chattest.Server) {
	t.Helper()
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := judgetest.NewLLM(srv.URL)
	c.MaxRequestsPerSecond = 4
	c.CacheSize = 0
	return c.New(t, judge.WithClock(clock)), srv
}

func TestBudgetExhaustion(t *testing.T) {
	clock := judgetest.NewFakeClock()
	j, srv := budgetedJudge(t, clock)
	req := judge.Request{Reference: "r", Chunks: []string{"x", "y", "z"}}
	if _, err := j.Judge(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// 1 request left in the bucket; 3 are needed: refused at once, nothing sent.
	if _, err := j.Judge(context.Background(), req); !errors.Is(err, judge.ErrOverBudget) {
		t.Fatalf("err %v, want judge.ErrOverBudget", err)
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls: an over-budget judgement must not send anything", srv.Calls())
	}
	clock.Advance(500 * time.Millisecond) // +2 tokens: 3
	if _, err := j.Judge(context.Background(), req); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	// A span larger than the bucket is admitted from a full bucket.
	clock.Advance(10 * time.Second)
	big := judge.Request{Reference: "r", Chunks: strings.Split("a b c d e f g h", " ")}
	if _, err := j.Judge(context.Background(), big); err != nil {
		t.Fatalf("8 chunks from a full bucket of 4: %v", err)
	}
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); !errors.Is(err, judge.ErrOverBudget) {
		t.Fatalf("the bucket must be in debt after the large span: %v", err)
	}
	clock.Advance(1250 * time.Millisecond) // debt of 4 repaid, 1 token
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatalf("after repaying the debt: %v", err)
	}
}

// Retries do not spend the budget: it bounds the judgements admitted, and
// an outage must read as an outage, not as an exhausted budget.
func TestRetriesDoNotSpendBudget(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if n == 1 {
			return chattest.Reply{Status: 503}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	c := judgetest.NewLLM(srv.URL)
	c.MaxRequestsPerSecond = 1
	j := c.New(t, judge.WithClock(judgetest.NewFakeClock()))
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
	if err != nil || !res.Verdicts[0].Relevant {
		t.Fatalf("%+v %v: the retry must not be refused for budget", res, err)
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d calls", srv.Calls())
	}
}

// A judgement the bucket cannot pay for at once waits for the refill, when
// its deadline leaves room: nothing is sent until the refill has paid for
// its requests. One that would wait more than half its time is refused at
// once, and one still waiting when the engine closes ends with ErrClosed.
func TestBudgetWaitsForItsRefill(t *testing.T) {
	clock := judgetest.NewManualClock()
	j, srv := budgetedJudge(t, clock)
	req := func(q string) judge.Request {
		return judge.Request{Query: q, Reference: "r", Chunks: []string{"x", "y", "z"}}
	}
	if _, err := j.Judge(context.Background(), req("first")); err != nil {
		t.Fatal(err)
	}
	// 1 request left; 3 needed: the refill pays for them in half a second.
	tk, err := j.Admit(req("second"), 10*time.Second)
	if err != nil {
		t.Fatalf("a judgement with 10s to its deadline must wait half a second for the budget: %v", err)
	}
	done := make(chan error, 1)
	tk.Commit(func(_ judge.Result, err error) { done <- err })
	time.Sleep(50 * time.Millisecond)
	if n := srv.Calls(); n != 3 {
		t.Fatalf("%d calls before the refill: a waiting judgement must send nothing", n)
	}
	clock.Advance(499 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	if n := srv.Calls(); n != 3 {
		t.Fatalf("%d calls a millisecond before the refill", n)
	}
	clock.Advance(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	if n := srv.Calls(); n != 6 {
		t.Fatalf("%d calls after the refill, want 6", n)
	}
	// The bucket is empty: 3 requests take 0.75 s, more than half of 1 s.
	if _, err := j.Admit(req("third"), time.Second); !errors.Is(err, judge.ErrOverBudget) {
		t.Fatalf("err %v, want judge.ErrOverBudget at once", err)
	}
	// Without a deadline a judgement does not wait.
	if _, err := j.Admit(req("fourth"), 0); !errors.Is(err, judge.ErrOverBudget) {
		t.Fatalf("no deadline: err %v, want judge.ErrOverBudget", err)
	}
	tk, err = j.Admit(req("fifth"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tk.Commit(func(_ judge.Result, err error) { done <- err })
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, judge.ErrClosed) {
		t.Fatalf("waiting at Close: err %v, want judge.ErrClosed", err)
	}
	if n := srv.Calls(); n != 6 {
		t.Fatalf("%d calls: a judgement refused, or closed while waiting, must send nothing", n)
	}
}
