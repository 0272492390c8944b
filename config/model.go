package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// Model is judge.model, parsed once, when the configuration is read: a
// "provider:model", or "cascade:provider:model" whose second stage is that
// LLM. Everything downstream reads the parsed value.
type Model struct {
	text     string // as written
	cascade  bool
	provider string
	name     string
	// err is why text is not a model; Validate reports it, so that a bad
	// model is refused with every other problem at once.
	err error
}

// ParseModel parses judge.model. A name without a colon is an OpenAI model
// ("gpt-4o-mini" means "openai:gpt-4o-mini"). Only the first colon after
// the provider separates, so "ollama:llama3.1:8b" is model "llama3.1:8b"
// on Ollama; a first segment that is not a known provider is refused
// rather than guessed, because a typo such as "opneai:gpt-4o" would
// otherwise silently go elsewhere. The Model returned keeps the error.
func ParseModel(s string) (Model, error) {
	m := Model{text: s}
	m.cascade, m.provider, m.name, m.err = parseJudgeModel(s)
	return m, m.err
}

// UnmarshalText parses judge.model from the YAML; a bad model is kept, with
// its error, for Validate to report.
func (m *Model) UnmarshalText(b []byte) error {
	*m, _ = ParseModel(string(b))
	return nil
}

// MarshalText gives back the model as written.
func (m Model) MarshalText() ([]byte, error) { return []byte(m.text), nil }

// String is the model as written.
func (m Model) String() string { return m.text }

// Err is why the model is not one, or nil.
func (m Model) Err() error {
	if m.err == nil && m.provider == "" {
		return errEmptyModel()
	}
	return m.err
}

// ID is the judge's "provider:model" recorded on spans and metrics: the
// model's canonical form, or "cascade:" and the LLM's.
func (m Model) ID() string {
	if m.cascade {
		return judge.CascadePrefix + m.provider + ":" + m.name
	}
	return m.provider + ":" + m.name
}

// Cascade reports whether builtin:lexical decides first, and the LLM
// (Provider, Name) the rest.
func (m Model) Cascade() bool { return m.cascade }

// Provider is the LLM's provider, or builtin.
func (m Model) Provider() string { return m.provider }

// Name is the provider's model name.
func (m Model) Name() string { return m.name }

// Builtin reports whether the judge runs in process, with no LLM.
func (m Model) Builtin() bool { return !m.cascade && m.provider == builtin.Provider }

// providers are the names accepted before the first colon, in the order
// error messages show them.
func providers() []string {
	var names []string
	for _, p := range openai.Providers {
		names = append(names, p.Name)
	}
	return append(names, builtin.Provider)
}

func errEmptyModel() error {
	return fmt.Errorf("model is empty; use provider:model with provider one of %s", strings.Join(providers(), ", "))
}

// parseJudgeModel parses a "provider:model", or a cascade
// "cascade:provider:model" whose second stage must be an LLM.
func parseJudgeModel(s string) (cascade bool, provider, name string, err error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(strings.ToLower(s), judge.CascadePrefix); ok {
		provider, name, err := parseProviderModel(s[len(s)-len(rest):])
		if err != nil {
			return true, "", "", fmt.Errorf("cascade: %w", err)
		}
		if provider == builtin.Provider {
			return true, "", "", fmt.Errorf("cascade: the second stage must be an LLM judge, not %s:%s", provider, name)
		}
		return true, provider, name, nil
	}
	if strings.EqualFold(s, strings.TrimSuffix(judge.CascadePrefix, ":")) {
		return true, "", "", errors.New("cascade needs its LLM: write cascade:provider:model, e.g. cascade:openai:gpt-4o-mini")
	}
	provider, name, err = parseProviderModel(s)
	return false, provider, name, err
}

func parseProviderModel(s string) (provider, name string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", errEmptyModel()
	}
	provider, name, found := strings.Cut(s, ":")
	if !found {
		return openai.ProviderOpenAI, s, nil
	}
	provider = strings.ToLower(provider)
	known := false
	for _, p := range providers() {
		known = known || p == provider
	}
	if !known {
		if near := closest(provider, providers()); len(near) > 0 {
			for i, p := range near {
				near[i] = p + ":" + name
			}
			return "", "", fmt.Errorf("unknown provider %q in %q (did you mean %s?); allowed providers: %s",
				provider, s, strings.Join(near, " or "), strings.Join(providers(), ", "))
		}
		return "", "", fmt.Errorf("unknown provider %q in %q; allowed providers: %s (a bare model name means openai; write openai:%s for an OpenAI model whose name has colons)",
			provider, s, strings.Join(providers(), ", "), s)
	}
	if name == "" {
		return "", "", fmt.Errorf("model name is empty in %q", s)
	}
	if provider == builtin.Provider && name != builtin.LexicalName {
		return "", "", fmt.Errorf("unknown builtin judge %q; allowed: %s", name, builtin.LexicalID)
	}
	return provider, name, nil
}
