package judge

import (
	"fmt"
	"strings"
)

// Provider names accepted before the colon of a "provider:model" string.
const (
	ProviderOpenAI    = "openai"
	ProviderAzure     = "azure"
	ProviderAnthropic = "anthropic"
	ProviderGoogle    = "google"
	ProviderOllama    = "ollama"
	ProviderBuiltin   = "builtin"
)

// BuiltinLexical is the model name of the offline judge.
const BuiltinLexical = "lexical"

// Providers lists the accepted providers, in the order error messages show them.
var Providers = []string{ProviderOpenAI, ProviderAzure, ProviderAnthropic, ProviderGoogle, ProviderOllama, ProviderBuiltin}

// providerInfo is what routing needs to know about a provider's
// OpenAI-compatible endpoint.
type providerInfo struct {
	// baseURL is the endpoint used when judge.base_url is empty; "" means the
	// provider has no default and base_url is required.
	baseURL string
	// needsKey reports whether a request without an API key can be expected
	// to fail, so that a missing key is a start-up error instead of a stream
	// of 401s.
	needsKey bool
	// jsonSchema reports whether the endpoint honours a json_schema
	// response_format. Anthropic's compatibility layer ignores it, so there
	// the contract is carried by the prompt alone.
	jsonSchema bool
}

var providerInfos = map[string]providerInfo{
	ProviderOpenAI:    {baseURL: "https://api.openai.com/v1", needsKey: true, jsonSchema: true},
	ProviderAzure:     {baseURL: "", needsKey: true, jsonSchema: true},
	ProviderAnthropic: {baseURL: "https://api.anthropic.com/v1/", needsKey: true, jsonSchema: false},
	ProviderGoogle:    {baseURL: "https://generativelanguage.googleapis.com/v1beta/openai/", needsKey: true, jsonSchema: true},
	ProviderOllama:    {baseURL: "http://localhost:11434/v1", needsKey: false, jsonSchema: true},
}

// Model is a parsed "provider:model" string.
type Model struct {
	Provider string
	Name     string
}

// String is the canonical "provider:model" form recorded on spans.
func (m Model) String() string { return m.Provider + ":" + m.Name }

// ParseModel splits "provider:model". A name without a colon is an OpenAI
// model ("gpt-4o-mini" means "openai:gpt-4o-mini"). Only the first colon
// separates, so "ollama:llama3.1:8b" is model "llama3.1:8b" on Ollama; a
// name whose first segment is not a known provider is refused rather than
// guessed, because a typo such as "opneai:gpt-4o" would otherwise silently
// go to the wrong place.
func ParseModel(s string) (Model, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Model{}, fmt.Errorf("model is empty; use provider:model with provider one of %s", strings.Join(Providers, ", "))
	}
	provider, name, found := strings.Cut(s, ":")
	if !found {
		return Model{Provider: ProviderOpenAI, Name: s}, nil
	}
	provider = strings.ToLower(provider)
	known := false
	for _, p := range Providers {
		known = known || p == provider
	}
	if !known {
		return Model{}, fmt.Errorf("unknown provider %q in %q; allowed providers: %s (a bare model name means openai; write openai:%s for an OpenAI model whose name has colons)",
			provider, s, strings.Join(Providers, ", "), s)
	}
	if name == "" {
		return Model{}, fmt.Errorf("model name is empty in %q", s)
	}
	if provider == ProviderBuiltin && name != BuiltinLexical {
		return Model{}, fmt.Errorf("unknown builtin judge %q; allowed: builtin:%s", name, BuiltinLexical)
	}
	return Model{Provider: provider, Name: name}, nil
}

// CascadePrefix, before a "provider:model", makes a cascade: builtin:lexical
// decides the verdicts it is sure of, the LLM the rest.
const CascadePrefix = "cascade:"

// ParseJudge parses judge.model: a "provider:model", or a cascade
// "cascade:provider:model" whose second stage is that LLM.
func ParseJudge(s string) (cascade bool, llm Model, err error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(strings.ToLower(s), CascadePrefix); ok {
		m, err := ParseModel(s[len(s)-len(rest):])
		if err != nil {
			return true, Model{}, fmt.Errorf("cascade: %w", err)
		}
		if m.Provider == ProviderBuiltin {
			return true, Model{}, fmt.Errorf("cascade: the second stage must be an LLM judge, not %s", m)
		}
		return true, m, nil
	}
	if strings.EqualFold(s, strings.TrimSuffix(CascadePrefix, ":")) {
		return true, Model{}, fmt.Errorf("cascade needs its LLM: write cascade:provider:model, e.g. cascade:openai:gpt-4o-mini")
	}
	m, err := ParseModel(s)
	return false, m, err
}

// JudgeID is the "provider:model" recorded on spans for judge.model s:
// the model's canonical form, or "cascade:" and the LLM's.
func JudgeID(s string) (string, error) {
	cascade, m, err := ParseJudge(s)
	if err != nil {
		return "", err
	}
	if cascade {
		return CascadePrefix + m.String(), nil
	}
	return m.String(), nil
}
