package config

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

func TestParseModel(t *testing.T) {
	tests := []struct {
		in             string
		provider, name string
		err            string
	}{
		{"openai:gpt-4o-mini", "openai", "gpt-4o-mini", ""},
		{"gpt-4o-mini", "openai", "gpt-4o-mini", ""},
		{"azure:my-deployment", "azure", "my-deployment", ""},
		{"anthropic:claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest", ""},
		{"google:gemini-2.0-flash", "google", "gemini-2.0-flash", ""},
		{"ollama:llama3.1:8b", "ollama", "llama3.1:8b", ""},
		{"OpenAI:gpt-4o", "openai", "gpt-4o", ""},
		{"builtin:lexical", "builtin", "lexical", ""},
		{"  openai:gpt-4o  ", "openai", "gpt-4o", ""},
		{"openai:ft:gpt-4o-mini:org::abc", "openai", "ft:gpt-4o-mini:org::abc", ""},
		{"", "", "", "model is empty"},
		{"opneai:gpt-4o", "", "", `unknown provider "opneai"`},
		{"mistral:small", "", "", "allowed providers: openai, azure, anthropic, google, ollama, builtin"},
		{"openai:", "", "", "model name is empty"},
		{"builtin:semantic", "", "", "allowed: builtin:lexical"},
	}
	for _, tc := range tests {
		got, err := ParseModel(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			if got.Err() != err {
				t.Errorf("%q: the model does not keep its error", tc.in)
			}
			continue
		}
		if err != nil || got.Provider() != tc.provider || got.Name() != tc.name || got.Cascade() {
			t.Errorf("%q: %s %s %v, want %s %s", tc.in, got.Provider(), got.Name(), err, tc.provider, tc.name)
		}
		if got.ID() != tc.provider+":"+tc.name || got.String() != tc.in {
			t.Errorf("%q: ID %q, written %q", tc.in, got.ID(), got.String())
		}
	}
}

func TestParseCascade(t *testing.T) {
	for _, tc := range []struct {
		in, id  string
		cascade bool
		err     string
	}{
		{"cascade:openai:gpt-4o-mini", "cascade:openai:gpt-4o-mini", true, ""},
		{"Cascade:ollama:llama3.1:8b", "cascade:ollama:llama3.1:8b", true, ""},
		{"cascade:gpt-4o-mini", "cascade:openai:gpt-4o-mini", true, ""},
		{"cascade", "", true, "cascade needs its LLM"},
		{"cascade:builtin:lexical", "", true, "must be an LLM judge"},
		{"openai:gpt-4o-mini", "openai:gpt-4o-mini", false, ""},
	} {
		m, err := ParseModel(tc.in)
		id := ""
		if err == nil {
			id = m.ID()
		}
		if m.Cascade() != tc.cascade || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || id != tc.id {
			t.Errorf("%q: cascade %v id %q err %v", tc.in, m.Cascade(), id, err)
		}
	}
}

// The model is parsed when the YAML is read, and a bad one is kept for
// Validate to report with every other problem; an unset one is the default.
func TestModelIsParsedOnUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		yaml    map[string]any
		id, err string
	}{
		{map[string]any{}, "builtin:lexical", ""},
		{map[string]any{"judge": map[string]any{"model": "Cascade:gpt-4o-mini", "api_key": "k"}}, "cascade:openai:gpt-4o-mini", ""},
		{map[string]any{"judge": map[string]any{"model": "opneai:x"}}, "", `judge.model: unknown provider "opneai"`},
	} {
		cfg := Default()
		if err := confmap.NewFromStringMap(tc.yaml).Unmarshal(cfg); err != nil {
			t.Fatalf("%v: %v", tc.yaml, err)
		}
		err := cfg.Validate()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Judge.Model.ID() != tc.id {
			t.Errorf("%v: %q %v, want %q", tc.yaml, cfg.Judge.Model.ID(), err, tc.id)
		}
	}
	// The zero Model, as a config built by hand leaves it, is no model.
	if err := (Model{}).Err(); err == nil || !strings.Contains(err.Error(), "model is empty") {
		t.Errorf("zero model: %v", err)
	}
}

// A configuration written back out (the collector's print-config) shows the
// model as written, and reads back as the same model.
func TestModelMarshalsAsWritten(t *testing.T) {
	cfg := Default()
	cfg.Judge.Model = mustParseModel("Cascade:openai:gpt-4o-mini")
	conf := confmap.New()
	if err := conf.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if got := conf.Get("judge::model"); got != "Cascade:openai:gpt-4o-mini" {
		t.Fatalf("judge.model written as %v", got)
	}
	back := Default()
	if err := conf.Unmarshal(back); err != nil {
		t.Fatal(err)
	}
	if back.Judge.Model != cfg.Judge.Model {
		t.Fatalf("read back as %+v", back.Judge.Model)
	}
}
