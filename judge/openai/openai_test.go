package openai_test

import (
	"context"
	"encoding/json"
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

func TestPerChunkRequestShape(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("Paris"))
	j := judgetest.NewLLM(srv.URL).New(t)
	req := judge.Request{
		Query:     "What is the capital of France?",
		Reference: "Paris",
		Chunks:    []string{"Paris is the capital of France.", "Berlin is in Germany.", "Paris has the Louvre."},
	}
	res, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := judgetest.Relevant(res), []bool{true, false, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	if res.Verdicts[0].Reason != "keyword check" {
		t.Errorf("reason %q", res.Verdicts[0].Reason)
	}
	if res.Usage != (judge.Usage{PromptTokens: 300, CompletionTokens: 30}) {
		t.Errorf("usage %+v", res.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want one per chunk", len(reqs))
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.Path != "/chat/completions" {
			t.Errorf("path %q", r.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization %q", got)
		}
		if r.Model != "gpt-test" {
			t.Errorf("model %q", r.Model)
		}
		if r.Temperature == nil || *r.Temperature != 0 {
			t.Errorf("temperature %v (raw %s), want present and 0", r.Temperature, r.Raw["temperature"])
		}
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil || rf.Type != "json_schema" || !rf.JSONSchema.Strict {
			t.Errorf("response format %s", r.ResponseFormat)
		}
		if !strings.Contains(string(rf.JSONSchema.Schema), `"enum":["yes","no"]`) {
			t.Errorf("schema %s", rf.JSONSchema.Schema)
		}
		if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Role != "user" {
			t.Fatalf("messages %+v", r.Messages)
		}
		if r.System() != openai.SystemPerChunk {
			t.Errorf("system prompt changed")
		}
		if r.Block("REFERENCE") != "Paris" || r.Block("QUESTION") != req.Query {
			t.Errorf("reference/question blocks: %q %q", r.Block("REFERENCE"), r.Block("QUESTION"))
		}
		seen[r.Block("CHUNK")] = true
	}
	for _, c := range req.Chunks {
		if !seen[c] {
			t.Errorf("chunk %q not sent verbatim", c)
		}
	}
}

func TestBatchedMode(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("Paris"))
	c := judgetest.NewLLM(srv.URL)
	c.Mode = openai.ModeBatched
	j := c.New(t)
	res, err := j.Judge(context.Background(), judge.Request{Reference: "Paris", Chunks: []string{"Berlin", "Paris!", "Rome", "Paris?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := judgetest.Relevant(res), []bool{false, true, false, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	if res.Verdicts[3].Reason != "keyword check 4" {
		t.Errorf("reasons not in order: %+v", res.Verdicts)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 per span", len(reqs))
	}
	if reqs[0].System() != openai.SystemBatched || !strings.Contains(string(reqs[0].ResponseFormat), `"verdicts"`) {
		t.Errorf("batched request shape: %s", reqs[0].ResponseFormat)
	}
	if res.Usage != (judge.Usage{PromptTokens: 400, CompletionTokens: 40}) {
		t.Errorf("usage %+v", res.Usage)
	}
}

// batched mode: one request per span, temperature 0, the reference and
// every chunk verbatim after the engine's cut, each in its own fence, in
// rank order, and a JSON-schema response format asking for "verdicts".
func TestBatchedRequestShape(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("Paris"))
	c := judgetest.NewLLM(srv.URL)
	c.Mode = openai.ModeBatched
	c.MaxChunkChars = 12
	j := c.New(t)
	req := judge.Request{
		Query:     "What is the capital of France?",
		Reference: "Paris is the capital of France.",
		Chunks:    []string{"Paris, France: its capital.", "Berlin", "Rome is not Paris."},
	}
	res, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := judgetest.Relevant(res), []bool{true, false, false}; !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts %v, want %v (the third chunk is cut before Paris)", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want one per span", len(reqs))
	}
	r := reqs[0]
	if r.Temperature == nil || *r.Temperature != 0 {
		t.Errorf("temperature %v (raw %s), want present and 0", r.Temperature, r.Raw["temperature"])
	}
	if got := r.Block("REFERENCE"); got != "Paris is the" {
		t.Errorf("reference block %q, want it cut to the engine's cut", got)
	}
	// The question is cut too.
	if got := r.Block("QUESTION"); got != "What is the " {
		t.Errorf("question block %q, want it cut to the engine's cut", got)
	}
	if got, want := r.Chunks(), []string{"Paris, Franc", "Berlin", "Rome is not "}; !reflect.DeepEqual(got, want) {
		t.Errorf("chunk blocks %q, want %q", got, want)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil || rf.Type != "json_schema" || !rf.JSONSchema.Strict ||
		!strings.Contains(string(rf.JSONSchema.Schema), `"verdicts"`) || !strings.Contains(string(rf.JSONSchema.Schema), `"enum":["yes","no"]`) {
		t.Errorf("response format %s", r.ResponseFormat)
	}
}

// TestParseTable runs every reply of the parse table through the real
// client: accepted ones become verdicts, the rest are failed attempts.
func TestParseTable(t *testing.T) {
	tests := []struct {
		content string
		want    *bool
	}{
		{`{"verdict": "yes", "reason": "states it"}`, ptr(true)},
		{`{"verdict": "no", "reason": "off topic"}`, ptr(false)},
		{`{"verdict": "Yes", "reason": "r"}`, ptr(true)},
		{`{"verdict": " no ", "reason": "r"}`, ptr(false)},
		{`{"verdict": "YES"}`, ptr(true)},
		{"  \n{\"verdict\":\"no\",\"reason\":\"r\"}\n ", ptr(false)},
		{"```json\n{\"verdict\": \"yes\", \"reason\": \"r\"}\n```", ptr(true)},
		{`yes`, nil},
		{`"yes"`, nil},
		{`{"verdict": "yes."}`, nil},
		{`{"verdict": true}`, nil},
		{`{"verdict": 1}`, nil},
		{`{"verdict": "maybe"}`, nil},
		{`{"verdict": ""}`, nil},
		{`{"reason": "no verdict field"}`, nil},
		{`{"verdict": "yes"} and some prose`, nil},
		{`Sure! {"verdict": "yes"}`, nil},
		{`garbage`, nil},
		{``, nil},
		{`{"verdicts": [{"verdict": "yes"}]}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.content, func(t *testing.T) {
			srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Content: tc.content} })
			c := judgetest.NewLLM(srv.URL)
			c.MaxRetries = 1
			j := c.New(t, judge.WithClock(judgetest.NewFakeClock()))
			res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"c"}})
			if tc.want == nil {
				if err == nil || !errors.Is(err, judge.ErrBadReply) {
					t.Fatalf("accepted %q as %+v (err %v)", tc.content, res, err)
				}
				if n := srv.Calls(); n != 2 {
					t.Fatalf("%d attempts, want 2 (a bad reply is retried)", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused %q: %v", tc.content, err)
			}
			if res.Verdicts[0].Relevant != *tc.want {
				t.Fatalf("%q -> %v", tc.content, res.Verdicts[0].Relevant)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestMalformedBodyIsRetried(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if n == 1 {
			return chattest.Reply{Body: `{"choices": [`}
		}
		if n == 2 {
			return chattest.Reply{Body: `{"choices": []}`}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	j := judgetest.NewLLM(srv.URL).New(t, judge.WithClock(judgetest.NewFakeClock()))
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls", srv.Calls())
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404} {
		srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: code} })
		j := judgetest.NewLLM(srv.URL).New(t, judge.WithClock(judgetest.NewFakeClock()))
		if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err == nil {
			t.Fatalf("%d: no error", code)
		}
		if srv.Calls() != 1 {
			t.Errorf("%d retried %d times", code, srv.Calls()-1)
		}
	}
}

// TestPerRequestTimeout uses real time: the server hangs and each attempt
// gives up after the backend's timeout.
func TestPerRequestTimeout(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply { return chattest.Reply{Delay: 10 * time.Second} })
	c := judgetest.NewLLM(srv.URL)
	c.Timeout = 50 * time.Millisecond
	c.MaxRetries = 1
	j := c.New(t, judge.WithClock(judgetest.NewFakeClock()))
	start := time.Now()
	_, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a per-request timeout is a judge failure, not the caller's deadline: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("took %s", elapsed)
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d attempts, want 2", srv.Calls())
	}
}

// A reasoning model takes no temperature: the request goes without one,
// and nothing is refused inside the client library.
func TestReasoningModelSendsNoTemperature(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := judgetest.NewLLM(srv.URL)
	c.Model = "o3-mini"
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithObserver(obs))
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if _, ok := r.Raw["temperature"]; ok {
		t.Fatalf("temperature sent to a reasoning model: %s", r.Raw["temperature"])
	}
	if s := obs.Snapshot(); s.Outcomes[judge.OutcomeOK] != 1 || len(s.Outcomes) != 1 {
		t.Fatalf("outcomes %v", s.Outcomes)
	}
}

// A request the client library refuses is final and is not a judge
// request: it is not retried and not counted.
func TestClientSideRefusalIsFinalAndUncounted(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := judgetest.NewLLM(srv.URL)
	c.Model = "o3-mini"
	obs := judgetest.NewRecordingObserver()
	be, err := openai.New(c.Options)
	if err != nil {
		t.Fatal(err)
	}
	// A temperature go-openai refuses for o-series models.
	openai.SendTemperature(be)
	j := judgetest.New(t, be, c.Settings, judge.WithObserver(obs), judge.WithClock(judgetest.NewFakeClock()))
	_, err = j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
	if judge.ReasonOf(err) != judge.ReasonInvalidRequest {
		t.Fatalf("err %v, want an invalid_request failure", err)
	}
	if srv.Calls() != 0 {
		t.Fatalf("%d requests reached the server", srv.Calls())
	}
	if s := obs.Snapshot(); len(s.Outcomes) != 0 {
		t.Fatalf("a request never sent was counted: %v", s.Outcomes)
	}
}

// An endpoint that refuses the temperature under a model name we do not
// recognise (an Azure deployment of a reasoning model) is asked again
// without it, and from then on.
func TestTemperatureRefusalIsLearned(t *testing.T) {
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if _, ok := r.Raw["temperature"]; ok {
			return chattest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.","type":"invalid_request_error"}}`}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	c := judgetest.NewLLM(srv.URL)
	c.Provider, c.Model = openai.ProviderAzure, "my-reasoner"
	c.BaseURL = srv.URL
	j := c.New(t)
	for i := range 2 {
		if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x" + strings.Repeat("y", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d calls, want one refusal and two without temperature", srv.Calls())
	}
}
