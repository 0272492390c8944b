package config

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
)

// testJudge is a valid LLM judge section aimed at url.
func testJudge(url string) Judge {
	j := Default().Judge
	j.Model = mustParseModel("openai:gpt-test")
	j.BaseURL = url
	j.APIKey = "sk-test"
	j.ClientConfig.Timeout = 5 * time.Second
	j.MaxConcurrency = 4
	j.MaxRequestsPerSecond = 0
	return j
}

func mustNewJudge(t *testing.T, j Judge, cache Cache, hc *http.Client, opts ...judge.Option) *judge.Engine {
	t.Helper()
	e, err := NewJudge(j, cache, hc, opts...)
	if err != nil {
		t.Fatalf("NewJudge: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Each problem of a judge section is reported under its key; the judge
// packages refuse what they could not build, in their own words.
func TestJudgeCheck(t *testing.T) {
	valid := testJudge("")
	if err := valid.Check("judge"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mutate func(*Judge, *Cache)
		want   string
		builds bool // NewJudge builds it anyway: the backend has no rule for it
	}{
		{func(j *Judge, _ *Cache) { j.Model, _ = ParseModel("nope:x") }, "judge.model: unknown provider", false},
		{func(j *Judge, _ *Cache) { j.APIKey = "" }, "judge.api_key: required for provider openai", true},
		{func(j *Judge, _ *Cache) { j.Model = mustParseModel("azure:dep") }, "judge.base_url: required for provider azure", false},
		{func(j *Judge, _ *Cache) { j.BaseURL = "localhost:8000" }, "judge.base_url: must start with http", false},
		{func(j *Judge, _ *Cache) { j.Mode = "streaming" }, "judge.mode: must be per_chunk or batched", false},
		{func(j *Judge, _ *Cache) { j.ResponseFormat = "xml" }, "judge.response_format", false},
		{func(j *Judge, _ *Cache) { j.ClientConfig.Timeout = 0 }, "judge.timeout: must be positive", false},
		{func(j *Judge, _ *Cache) { j.MaxConcurrency = 0 }, "judge.max_concurrency", false},
		{func(j *Judge, _ *Cache) { j.MaxRequestsPerSecond = -1 }, "judge.max_requests_per_second", false},
		{func(j *Judge, _ *Cache) { j.MaxRetries = -1 }, "judge.max_retries", false},
		{func(j *Judge, _ *Cache) { j.MaxChunkChars = 0 }, "judge.max_chunk_chars", false},
		{func(_ *Judge, c *Cache) { c.Size = -1 }, "cache.size", false},
		{func(_ *Judge, c *Cache) { c.TTL = -time.Second }, "cache.ttl", false},
	}
	for _, tc := range tests {
		j, cache := valid, Cache{}
		tc.mutate(&j, &cache)
		err := errors.Join(append(j.problems("judge"), cache.problems()...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
		e, err := NewJudge(j, cache, nil)
		if err == nil {
			_ = e.Close()
		}
		if (err == nil) != tc.builds {
			t.Errorf("%s: NewJudge err %v", tc.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "judge.") {
			t.Errorf("%s: the judge packages named a key: %v", tc.want, err)
		}
	}
	// Ollama and custom endpoints work without a key.
	j := valid
	j.Model, j.APIKey = mustParseModel("ollama:llama3"), ""
	if err := j.Check("judge"); err != nil {
		t.Errorf("ollama without key: %v", err)
	}
	// Another section with a judge's keys gets its own key names.
	j.MaxRetries = -1
	if err := j.Check("shadow_judge"); err == nil || !strings.Contains(err.Error(), "shadow_judge.max_retries: must not be negative") {
		t.Errorf("err %v", err)
	}
}

// recordingTransport answers every request with a "yes" verdict and records
// where it went, so routing is checked without any network.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []map[string]json.RawMessage
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r)
	rt.body = append(rt.body, m)
	rt.mu.Unlock()
	out := `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"verdict\":\"yes\",\"reason\":\"r\"}"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(out)), Request: r}, nil
}

// Every provider's model goes to its endpoint, with its way of sending the
// key and the response format it honours.
func TestProviderRouting(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		baseURL    string
		apiVersion string
		wantURL    string
		wantHeader [2]string
		wantFormat string // "" = no response format
	}{
		{"openai", "openai:gpt-4o-mini", "", "", "https://api.openai.com/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, "json_schema"},
		{"bare", "gpt-4o-mini", "", "", "https://api.openai.com/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, "json_schema"},
		{"azure", "azure:rag-judge.v2", "https://acme.openai.azure.com", "", "https://acme.openai.azure.com/openai/deployments/rag-judge.v2/chat/completions?api-version=2024-10-21", [2]string{"Api-Key", "k"}, "json_schema"},
		{"azure version", "azure:dep", "https://acme.openai.azure.com/", "2025-01-01-preview", "https://acme.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2025-01-01-preview", [2]string{"Api-Key", "k"}, "json_schema"},
		{"anthropic", "anthropic:claude-3-5-haiku-latest", "", "", "https://api.anthropic.com/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, ""},
		{"google", "google:gemini-2.0-flash", "", "", "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", [2]string{"Authorization", "Bearer k"}, "json_schema"},
		{"ollama", "ollama:llama3.1:8b", "", "", "http://localhost:11434/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, "json_schema"},
		{"base_url", "openai:Qwen/Qwen2.5-7B-Instruct", "http://vllm.internal:8000/v1", "", "http://vllm.internal:8000/v1/chat/completions", [2]string{"Authorization", "Bearer k"}, "json_schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &recordingTransport{}
			j := testJudge(tc.baseURL)
			j.Model, j.APIKey, j.APIVersion = mustParseModel(tc.model), "k", tc.apiVersion
			e := mustNewJudge(t, j, Cache{}, &http.Client{Transport: rt})
			if e.ID() != j.Model.ID() {
				t.Errorf("ID %q", e.ID())
			}
			if _, err := e.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"c"}}); err != nil {
				t.Fatal(err)
			}
			r := rt.reqs[0]
			if r.URL.String() != tc.wantURL {
				t.Errorf("URL %s, want %s", r.URL, tc.wantURL)
			}
			if got := r.Header.Get(tc.wantHeader[0]); got != tc.wantHeader[1] {
				t.Errorf("%s: %q", tc.wantHeader[0], got)
			}
			if got := responseFormatType(rt.body[0]); got != tc.wantFormat {
				t.Errorf("response format type %q, want %q", got, tc.wantFormat)
			}
		})
	}
}

func responseFormatType(body map[string]json.RawMessage) string {
	var rf struct{ Type string }
	if raw, ok := body["response_format"]; ok {
		_ = json.Unmarshal(raw, &rf)
	}
	return rf.Type
}

// response_format overrides what the provider is known to honour.
func TestResponseFormatOverride(t *testing.T) {
	for format, want := range map[string]string{"json_object": "json_object", "text": "", "json_schema": "json_schema"} {
		rt := &recordingTransport{}
		j := testJudge("")
		j.Model = mustParseModel("anthropic:claude")
		j.ResponseFormat = format
		e := mustNewJudge(t, j, Cache{}, &http.Client{Transport: rt})
		if _, err := e.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"c"}}); err != nil {
			t.Fatal(err)
		}
		if got := responseFormatType(rt.body[0]); got != want {
			t.Errorf("%s: response format %q", format, got)
		}
	}
}

// Every key of the judge's sections reaches the judge: the full testdata
// config, aimed at a local server, sends its key, mode, criteria and
// headers' secrets where they belong, and keeps verdicts as cache: says.
func TestNewJudgeMapsEveryKey(t *testing.T) {
	cfg, err := load(t, "testdata/config.yaml", "ragprecision/full")
	if err != nil {
		t.Fatal(err)
	}
	srv := chattest.NewServer(chattest.KeywordJudge("x"))
	defer srv.Close()
	cfg.Judge.BaseURL = srv.URL
	cfg.Judge.ClientConfig.ProxyURL, cfg.Judge.ClientConfig.TLS.CAFile = "", ""
	clock := &steppedClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	e := mustNewJudge(t, cfg.Judge, cfg.Cache, nil, judge.WithClock(clock))
	if e.ID() != "openai:gpt-4o-mini" {
		t.Fatalf("ID %q", e.ID())
	}
	req := judge.Request{Reference: "r", Chunks: []string{"x", "y"}}
	for range 2 {
		if _, err := e.Judge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Calls() != 1 {
		t.Fatalf("%d requests: want one batched request (mode), then the cache's verdicts (size)", srv.Calls())
	}
	clock.step(time.Hour) // ttl
	if _, err := e.Judge(context.Background(), req); err != nil || srv.Calls() != 2 {
		t.Fatalf("%v, %d requests: the verdicts outlived the cache's ttl", err, srv.Calls())
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Authorization"); got != "Bearer sk-secret-value" {
		t.Errorf("Authorization %q", got)
	}
	if !r.Batched() || r.Block("CRITERIA") != cfg.Judge.Criteria || r.Model != "gpt-4o-mini" {
		t.Errorf("request %+v", r)
	}
	if got := responseFormatType(r.Raw); got != "json_object" {
		t.Errorf("response format %q", got)
	}
}

// steppedClock moves only when the test steps it.
type steppedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *steppedClock) AfterFunc(d time.Duration, f func()) judge.Timer { return time.AfterFunc(d, f) }

// The judge's HTTP client has no client-wide timeout (each attempt has its
// own) and keeps an idle connection for every request that can be in
// flight, unless the user set how many.
func TestHTTPClientConfig(t *testing.T) {
	j := testJudge("")
	j.MaxConcurrency = 16
	cc := j.HTTPClientConfig()
	if cc.Timeout != 0 || cc.MaxIdleConnsPerHost != 16 || j.ClientConfig.Timeout != 5*time.Second {
		t.Fatalf("timeout %s, idle %d", cc.Timeout, cc.MaxIdleConnsPerHost)
	}
	j.MaxConcurrency = 1
	if cc := j.HTTPClientConfig(); cc.MaxIdleConnsPerHost != http.DefaultMaxIdleConnsPerHost {
		t.Fatalf("idle %d, want no fewer than Go's default", cc.MaxIdleConnsPerHost)
	}
	j.ClientConfig.MaxIdleConnsPerHost = 3
	if cc := j.HTTPClientConfig(); cc.MaxIdleConnsPerHost != 3 {
		t.Fatalf("idle %d, want the one set", cc.MaxIdleConnsPerHost)
	}
}

// Header values are secrets: they never appear in what a failure says.
func TestHeaderValuesAreScrubbed(t *testing.T) {
	srv := chattest.NewServer(func(int, chattest.Request) chattest.Reply {
		return chattest.Reply{Status: 400, Body: `{"error":{"message":"header X-Gateway-Key: gw-secret-value rejected"}}`}
	})
	defer srv.Close()
	j := testJudge(srv.URL)
	j.MaxRetries = 0
	j.ClientConfig.Headers = configopaque.MapList{{Name: "X-Gateway-Key", Value: "gw-secret-value"}}
	e := mustNewJudge(t, j, Cache{}, nil)
	_, err := e.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"c"}})
	if err == nil || strings.Contains(err.Error(), "gw-secret-value") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err %v", err)
	}
}

// judge_version changes with what can change a verdict, and with nothing
// else: a restart, or another replica, with the same config gets the same.
func TestJudgeVersion(t *testing.T) {
	llm := func(mutate func(*Judge)) string {
		j := defaultJudge()
		j.Model = mustParseModel("openai:gpt-4o-mini")
		if mutate != nil {
			mutate(&j)
		}
		return j.Version()
	}
	base := llm(nil)
	if len(base) != 12 || llm(nil) != base {
		t.Fatalf("version %q is not a stable 12-hex-digit hash", base)
	}
	for name, mutate := range map[string]func(*Judge){
		"criteria":        func(j *Judge) { j.Criteria = "must state the policy number" },
		"model":           func(j *Judge) { j.Model = mustParseModel("openai:gpt-4.1-mini") },
		"mode":            func(j *Judge) { j.Mode = "batched" },
		"response_format": func(j *Judge) { j.ResponseFormat = "json_object" },
		"max_chunk_chars": func(j *Judge) { j.MaxChunkChars = 1000 },
		"cascade":         func(j *Judge) { j.Model = mustParseModel("cascade:openai:gpt-4o-mini") },
	} {
		if v := llm(mutate); v == base {
			t.Errorf("changing %s leaves judge_version %s", name, v)
		}
	}
	for name, mutate := range map[string]func(*Judge){
		"api_key":                 func(j *Judge) { j.APIKey = "sk-other" },
		"max_concurrency":         func(j *Judge) { j.MaxConcurrency = 2 },
		"max_requests_per_second": func(j *Judge) { j.MaxRequestsPerSecond = 1 },
		"timeout":                 func(j *Judge) { j.ClientConfig.Timeout = 3 * time.Second },
	} {
		if v := llm(mutate); v != base {
			t.Errorf("changing %s, which changes no verdict, changes judge_version to %s", name, v)
		}
	}
	cascade := func(c float64) string {
		j := defaultJudge()
		j.Model = mustParseModel("cascade:openai:gpt-4o-mini")
		j.Cascade.MinConfidence = c
		return j.Version()
	}
	if cascade(0.7) == cascade(0.8) {
		t.Error("the cascade's min_confidence does not change judge_version")
	}
	lexical := defaultJudge()
	v := lexical.Version()
	lexical.Mode, lexical.Criteria = "batched", "what builtin:lexical cannot read"
	if lexical.Version() != v {
		t.Error("settings builtin:lexical does not read change its judge_version")
	}
}
