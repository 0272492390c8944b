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

func TestBudgetExhaustion(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := judgetest.NewLLM(srv.URL)
	c.MaxRequestsPerSecond = 4
	c.CacheSize = 0
	clock := judgetest.NewFakeClock()
	j := c.New(t, judge.WithClock(clock))
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
