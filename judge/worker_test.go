package judge_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
	"github.com/ragprecision/ragprecision/judge/openai"
)

func Test429HonoursRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After-Ms": "1500"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "600"}, judge.MaxRetryAfter},
	} {
		srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
			if n == 1 {
				return chattest.Reply{Status: http.StatusTooManyRequests, Header: tc.header}
			}
			return chattest.KeywordJudge("x")(n, r)
		})
		clock := judgetest.NewFakeClock()
		obs := judgetest.NewRecordingObserver()
		j := judgetest.NewLLM(srv.URL).New(t, judge.WithClock(clock), judge.WithObserver(obs))
		res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
		if err != nil || !res.Verdicts[0].Relevant {
			t.Fatalf("%v: %+v %v", tc.header, res, err)
		}
		if got := clock.Slept(); !reflect.DeepEqual(got, []time.Duration{tc.want}) {
			t.Errorf("%v: slept %v, want %v", tc.header, got, tc.want)
		}
		if s := obs.Snapshot(); s.Outcomes[judge.OutcomeRetry] != 1 || s.Outcomes[judge.OutcomeOK] != 1 {
			t.Errorf("outcomes %v", s.Outcomes)
		}
	}
}

func TestServerErrorThenSuccessBacksOff(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if n <= 2 {
			return chattest.Reply{Status: 500 + n*2} // 502, 504
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	clock := judgetest.NewFakeClock()
	j := judgetest.NewLLM(srv.URL).New(t, judge.WithClock(clock), judge.WithJitter(func() float64 { return 0.5 }))
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	// equal jitter at 0.5: 3/4 of 500ms, then of 1s
	if got, want := clock.Slept(), []time.Duration{375 * time.Millisecond, 750 * time.Millisecond}; !reflect.DeepEqual(got, want) {
		t.Fatalf("backoff %v, want %v", got, want)
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls", srv.Calls())
	}
}

func TestRetriesExhausted(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 503} })
	c := judgetest.NewLLM(srv.URL)
	c.MaxRetries = 2
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithClock(judgetest.NewFakeClock()), judge.WithObserver(obs))
	_, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
	if err == nil || errors.Is(err, judge.ErrOverBudget) {
		t.Fatalf("err %v", err)
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls, want 1 + MaxRetries", srv.Calls())
	}
	if s := obs.Snapshot(); s.Outcomes[judge.OutcomeRetry] != 2 || s.Outcomes[judge.OutcomeError] != 1 {
		t.Errorf("outcomes %v", s.Outcomes)
	}
}

// A Retry-After longer than the span has left ends the judgement at once.
func TestRetryAfterBeyondDeadline(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply {
		return chattest.Reply{Status: 429, Header: map[string]string{"Retry-After": "20"}}
	})
	j := judgetest.NewLLM(srv.URL).New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := j.Judge(ctx, judge.Request{Reference: "r", Chunks: []string{"x"}})
	if err == nil || errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %s: want a prompt judge error", err, time.Since(start))
	}
	if !strings.Contains(err.Error(), "after the deadline") || judge.ReasonOf(err) != judge.ReasonRateLimited {
		t.Fatalf("err %v", err)
	}
}

// A batched reply with the wrong number of verdicts is retried, and when the
// model keeps miscounting the span is judged chunk by chunk.
func TestBatchedWrongCountFallsBackToPerChunk(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if r.Batched() {
			return chattest.Reply{Content: `{"verdicts":[{"verdict":"yes","reason":"x"}]}`, PromptTokens: 50, CompletionTokens: 5}
		}
		return chattest.KeywordJudge("Paris")(n, r)
	})
	c := judgetest.NewLLM(srv.URL)
	c.Mode = openai.ModeBatched
	c.MaxRetries = 2
	clock := judgetest.NewFakeClock()
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithClock(clock), judge.WithObserver(obs), judge.WithJitter(func() float64 { return 0 }))
	res, err := j.Judge(context.Background(), judge.Request{Reference: "Paris", Chunks: []string{"Paris", "Rome", "Oslo"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := judgetest.Relevant(res), []bool{true, false, false}; !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	batched, perChunk := 0, 0
	for _, r := range srv.Requests() {
		if r.Batched() {
			batched++
		} else {
			perChunk++
		}
	}
	if batched != 3 || perChunk != 3 {
		t.Fatalf("batched=%d per_chunk=%d, want 3 batched attempts then 3 per-chunk requests", batched, perChunk)
	}
	if res.Usage.PromptTokens != 3*50+3*100 {
		t.Errorf("usage must include the failed attempts: %+v", res.Usage)
	}
	s := obs.Snapshot()
	// The last batched attempt counts as a retry too: the chunks are asked
	// again, one by one.
	if s.Outcomes[judge.OutcomeRetry] != 3 || s.Outcomes[judge.OutcomeError] != 0 || s.Outcomes[judge.OutcomeOK] != 3 || s.Reasons[judge.ReasonBadReply] != 3 {
		t.Errorf("outcomes %v", s.Outcomes)
	}
}

// Malformed batched replies, not only miscounted ones, fall back to
// per-chunk requests.
func TestBatchedMalformedFallsBackToPerChunk(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if r.Batched() {
			return chattest.Reply{Content: `{"verdicts": "all yes"}`}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	c := judgetest.NewLLM(srv.URL)
	c.Mode = openai.ModeBatched
	c.MaxRetries = 1
	j := c.New(t, judge.WithClock(judgetest.NewFakeClock()))
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x", "y"}})
	if err != nil || !reflect.DeepEqual(judgetest.Relevant(res), []bool{true, false}) {
		t.Fatalf("%+v %v", res, err)
	}
	if srv.Calls() != 4 {
		t.Fatalf("%d calls, want 2 batched attempts and 2 per-chunk requests", srv.Calls())
	}
}

// batched mode never guesses: when the batched attempts fail and one chunk
// still cannot be judged, the span gets no verdicts at all.
func TestBatchedNeverGuesses(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if r.Batched() {
			return chattest.Reply{Content: `{"verdicts": [{"verdict": "yes"}]}`} // one verdict for two chunks
		}
		if strings.Contains(r.Block("CHUNK"), "Berlin") {
			return chattest.Reply{Content: "probably not"}
		}
		return chattest.KeywordJudge("Paris")(n, r)
	})
	c := judgetest.NewLLM(srv.URL)
	c.Mode = openai.ModeBatched
	c.MaxRetries = 1
	j := c.New(t, judge.WithClock(judgetest.NewFakeClock()))
	res, err := j.Judge(context.Background(), judge.Request{Reference: "Paris", Chunks: []string{"Paris", "Berlin"}})
	if !errors.Is(err, judge.ErrBadReply) || len(res.Verdicts) != 0 {
		t.Fatalf("%+v %v: want no verdicts and a bad-reply error", res, err)
	}
}

// noJitter makes every backoff its shortest.
var noJitter = judge.WithJitter(func() float64 { return 0 })
