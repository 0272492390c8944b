package judge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseModel(t *testing.T) {
	tests := []struct {
		in   string
		want Model
		err  string
	}{
		{"openai:gpt-4o-mini", Model{"openai", "gpt-4o-mini"}, ""},
		{"gpt-4o-mini", Model{"openai", "gpt-4o-mini"}, ""},
		{"azure:my-deployment", Model{"azure", "my-deployment"}, ""},
		{"anthropic:claude-3-5-haiku-latest", Model{"anthropic", "claude-3-5-haiku-latest"}, ""},
		{"google:gemini-2.0-flash", Model{"google", "gemini-2.0-flash"}, ""},
		{"ollama:llama3.1:8b", Model{"ollama", "llama3.1:8b"}, ""},
		{"OpenAI:gpt-4o", Model{"openai", "gpt-4o"}, ""},
		{"builtin:lexical", Model{"builtin", "lexical"}, ""},
		{"  openai:gpt-4o  ", Model{"openai", "gpt-4o"}, ""},
		{"openai:ft:gpt-4o-mini:org::abc", Model{"openai", "ft:gpt-4o-mini:org::abc"}, ""},
		{"", Model{}, "model is empty"},
		{"opneai:gpt-4o", Model{}, `unknown provider "opneai"`},
		{"mistral:small", Model{}, "allowed providers: openai, azure, anthropic, google, ollama, builtin"},
		{"openai:", Model{}, "model name is empty"},
		{"builtin:semantic", Model{}, "allowed: builtin:lexical"},
	}
	for _, tc := range tests {
		got, err := ParseModel(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
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

func TestProviderRouting(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		baseURL    string
		apiVersion string
		wantURL    string
		wantHeader [2]string
		wantFormat string // "" = no response_format
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
			c := testConfig(tc.baseURL)
			c.Model, c.APIKey, c.APIVersion = tc.model, "k", tc.apiVersion
			j := mustNew(t, c, WithHTTPClient(&http.Client{Transport: rt}))
			wantID, _ := ParseModel(tc.model)
			if j.ID() != wantID.String() {
				t.Errorf("ID %q", j.ID())
			}
			if _, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"c"}}); err != nil {
				t.Fatal(err)
			}
			r := rt.reqs[0]
			if r.URL.String() != tc.wantURL {
				t.Errorf("URL %s, want %s", r.URL, tc.wantURL)
			}
			if got := r.Header.Get(tc.wantHeader[0]); got != tc.wantHeader[1] {
				t.Errorf("%s: %q", tc.wantHeader[0], got)
			}
			var rf struct{ Type string }
			if raw, ok := rt.body[0]["response_format"]; ok {
				_ = json.Unmarshal(raw, &rf)
			}
			if rf.Type != tc.wantFormat {
				t.Errorf("response_format type %q, want %q", rf.Type, tc.wantFormat)
			}
		})
	}
}

func TestResponseFormatOverride(t *testing.T) {
	for format, want := range map[ResponseFormat]string{FormatJSONObject: "json_object", FormatText: "", FormatJSONSchema: "json_schema"} {
		rt := &recordingTransport{}
		c := testConfig("")
		c.Model = "anthropic:claude"
		c.ResponseFormat = format
		j := mustNew(t, c, WithHTTPClient(&http.Client{Transport: rt}))
		if _, err := j.Judge(context.Background(), Request{Reference: "r", Chunks: []string{"c"}}); err != nil {
			t.Fatal(err)
		}
		var rf struct{ Type string }
		if raw, ok := rt.body[0]["response_format"]; ok {
			_ = json.Unmarshal(raw, &rf)
		}
		if rf.Type != want {
			t.Errorf("%s: response_format %q", format, rf.Type)
		}
	}
}

func TestBuiltinNeedsNoNetwork(t *testing.T) {
	c := Config{Model: "builtin:lexical", Mode: ModePerChunk, ResponseFormat: FormatAuto, Timeout: time.Second, MaxConcurrency: 1, MaxChunkChars: 100}
	j := mustNew(t, c)
	if j.ID() != "builtin:lexical" {
		t.Fatalf("ID %q", j.ID())
	}
	res, err := j.Judge(context.Background(), Request{
		Query:     "Who painted the Mona Lisa?",
		Reference: "Leonardo da Vinci",
		Chunks:    []string{"The Mona Lisa was painted by Leonardo da Vinci in the early 16th century.", "Bananas are rich in potassium."},
	})
	if err != nil || len(res.Verdicts) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if !res.Verdicts[0].Relevant || res.Verdicts[1].Relevant {
		t.Fatalf("verdicts %+v", res.Verdicts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Judge(ctx, Request{Reference: "r", Chunks: []string{"c"}}); err == nil {
		t.Fatal("a cancelled judgement must not return verdicts")
	}
}

func TestConfigValidate(t *testing.T) {
	valid := testConfig("")
	if err := valid.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Model = "nope:x" }, "judge.model: unknown provider"},
		{func(c *Config) { c.APIKey = "" }, "judge.api_key: required for provider openai"},
		{func(c *Config) { c.Model = "azure:dep" }, "judge.base_url: required for provider azure"},
		{func(c *Config) { c.BaseURL = "localhost:8000" }, "judge.base_url: must start with http"},
		{func(c *Config) { c.Mode = "streaming" }, "judge.mode: must be per_chunk or batched"},
		{func(c *Config) { c.ResponseFormat = "xml" }, "judge.response_format"},
		{func(c *Config) { c.Timeout = 0 }, "judge.timeout: must be positive"},
		{func(c *Config) { c.MaxConcurrency = 0 }, "judge.max_concurrency"},
		{func(c *Config) { c.MaxRequestsPerSecond = -1 }, "judge.max_requests_per_second"},
		{func(c *Config) { c.MaxRetries = -1 }, "judge.max_retries"},
		{func(c *Config) { c.MaxChunkChars = 0 }, "judge.max_chunk_chars"},
		{func(c *Config) { c.CacheSize = -1 }, "cache.size"},
		{func(c *Config) { c.CacheTTL = -time.Second }, "cache.ttl"},
	}
	for _, tc := range tests {
		c := valid
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
		if _, err := New(c); err == nil {
			t.Errorf("New accepted an invalid config (%s)", tc.want)
		}
	}
	// Ollama and custom endpoints work without a key.
	c := valid
	c.Model, c.APIKey = "ollama:llama3", ""
	if err := c.Validate(); err != nil {
		t.Errorf("ollama without key: %v", err)
	}
}
