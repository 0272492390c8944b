package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// This file is the judge's side of the configuration: the judge: and
// cache: sections, their defaults and checks, and NewJudge, the one place
// where they become the engine's and the backends' options.

// Judge configures the relevance judge.
type Judge struct {
	// Model is provider:model, provider one of openai, azure, anthropic,
	// google, ollama, builtin; a bare name means openai; or
	// cascade:provider:model, where builtin:lexical decides the verdicts it
	// is sure of and that LLM the rest. Default builtin:lexical.
	Model Model `mapstructure:"model"`
	// Cascade tunes a cascade judge (model: cascade:provider:model).
	Cascade Cascade `mapstructure:"cascade"`
	// Criteria says what "relevant" means in your domain ("must state the
	// policy number"). LLM judges read it in a fenced block of their
	// prompt; it is part of the prompt version and of every cache key.
	// builtin:lexical cannot read it (a cascade then lets builtin:lexical
	// decide only "not relevant" verdicts). Default "".
	Criteria string `mapstructure:"criteria"`
	// BaseURL points at any OpenAI-compatible endpoint instead of the
	// provider's own. Required for azure. `endpoint`, the collector's usual
	// HTTP client key, is accepted as a synonym. Default "".
	BaseURL string `mapstructure:"base_url"`
	// APIKey authenticates to the provider. Never logged. Default "".
	APIKey configopaque.String `mapstructure:"api_key"`
	// APIVersion is Azure OpenAI's api-version. Default "" (2024-10-21).
	APIVersion string `mapstructure:"api_version"`
	// Mode is per_chunk (one request per chunk) or batched (one per span).
	// Default per_chunk.
	Mode string `mapstructure:"mode"`
	// ResponseFormat is auto (json_schema where the provider honours it),
	// json_schema, json_object or text. Default auto.
	ResponseFormat string `mapstructure:"response_format"`
	// MaxConcurrency bounds judge requests in flight. Default 8.
	MaxConcurrency int `mapstructure:"max_concurrency"`
	// MaxRequestsPerSecond is the judge budget; selected spans that would
	// exceed it pass unscored with status budget. Retries are not charged
	// to it. 0 disables the budget. Default 10.
	MaxRequestsPerSecond float64 `mapstructure:"max_requests_per_second"`
	// MaxRetries is how many times a failed request is retried. Default 3.
	MaxRetries int `mapstructure:"max_retries"`
	// MaxChunkChars truncates each chunk, and the reference, before judging,
	// for every judge. Default 4000.
	MaxChunkChars int `mapstructure:"max_chunk_chars"`
	// Pricing turns the tokens the judge reports into money, counted in
	// otelcol_processor_ragprecision_judge_cost_total. Default: not set, no
	// cost counted.
	Pricing Pricing `mapstructure:"pricing"`
	// Canary re-judges labelled retrievals every interval to watch the
	// judge itself. Default: off.
	Canary Canary `mapstructure:"canary"`

	// ClientConfig holds the collector's HTTP client settings, as every HTTP
	// exporter has them: timeout (per judge request; default 10s), tls,
	// headers (opaque values), auth (an authenticator extension: OAuth2,
	// bearer token, cloud identity), proxy_url, compression, keepalive,
	// max_conns_per_host… Its idle connections per host default to
	// max_concurrency, so that requests in flight reuse connections.
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`
}

// Cascade tunes a cascade judge.
type Cascade struct {
	// MinConfidence is the confidence from which builtin:lexical's verdicts
	// are final; the LLM decides the rest. Higher: more LLM calls, closer
	// to the LLM's own agreement. Default 0.7 (see docs/JUDGES.md, "Choosing
	// a judge").
	MinConfidence float64 `mapstructure:"min_confidence"`
}

// Pricing is the judge's price list, in the operator's currency.
type Pricing struct {
	// InputPerMillion is the price of a million prompt tokens. Default 0.
	InputPerMillion float64 `mapstructure:"input_per_million"`
	// OutputPerMillion is the price of a million completion tokens.
	// Default 0.
	OutputPerMillion float64 `mapstructure:"output_per_million"`
	// Currency labels the cost counter (currency="USD"). Default USD.
	Currency string `mapstructure:"currency"`
}

// Enabled reports whether a price was set.
func (p Pricing) Enabled() bool { return p.InputPerMillion > 0 || p.OutputPerMillion > 0 }

// Cache configures the verdict cache.
type Cache struct {
	// Size is the number of verdicts kept; 0 disables the cache.
	// Default 100000.
	Size int `mapstructure:"size"`
	// TTL is how long a verdict is served; 0 keeps it until evicted.
	// Default 24h.
	TTL time.Duration `mapstructure:"ttl"`
}

func defaultJudge() Judge {
	j := Judge{
		Model:                mustParseModel(builtin.LexicalID),
		Mode:                 string(openai.ModePerChunk),
		ResponseFormat:       string(openai.FormatAuto),
		MaxConcurrency:       8,
		MaxRequestsPerSecond: 10,
		MaxRetries:           3,
		MaxChunkChars:        4000,
		Pricing:              Pricing{Currency: "USD"},
		Cascade:              Cascade{MinConfidence: 0.7},
		Canary:               defaultCanary(),
		ClientConfig:         confighttp.NewDefaultClientConfig(),
	}
	// Room for a retry inside the default max_wait of 30s: two attempts and
	// a backoff take at most 20.5s.
	j.ClientConfig.Timeout = 10 * time.Second
	return j
}

func mustParseModel(s string) Model {
	m, err := ParseModel(s)
	if err != nil {
		panic(err)
	}
	return m
}

// baseURL is base_url, or endpoint when only that is set.
func (j *Judge) baseURL() string {
	if j.BaseURL != "" {
		return j.BaseURL
	}
	return j.ClientConfig.Endpoint
}

// maxCriteriaBytes bounds the criteria, which go into every prompt.
const maxCriteriaBytes = 4096

// Check reports every problem of a judge section at once, naming its keys
// under section ("judge" for judge:), so that one check serves every
// section with a judge's keys.
func (j *Judge) Check(section string) error { return errors.Join(j.problems(section)...) }

func (j *Judge) problems(section string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	key := func(k string) string { return section + "." + k }

	m := j.Model
	if err := m.Err(); err != nil {
		add("%s: %w", key("model"), err)
	}
	if m.Cascade() && !(j.Cascade.MinConfidence >= 0 && j.Cascade.MinConfidence <= 1) {
		add("%s: must be within [0, 1], got %v", key("cascade.min_confidence"), j.Cascade.MinConfidence)
	}
	if strings.Contains(j.Criteria, "\x00") || len(j.Criteria) > maxCriteriaBytes {
		add("%s: must be text of at most %d bytes", key("criteria"), maxCriteriaBytes)
	}
	baseURL := j.baseURL()
	if p, ok := openai.ProviderNamed(m.Provider()); ok {
		if p.BaseURL == "" && baseURL == "" {
			add("%s: required for provider %s (e.g. https://<resource>.openai.azure.com)", key("base_url"), p.Name)
		}
		if p.NeedsKey && j.APIKey == "" && baseURL == "" {
			add("%s: required for provider %s; set it, e.g. api_key: ${env:OPENAI_API_KEY}", key("api_key"), p.Name)
		}
	}
	if baseURL != "" && !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		add("%s: must start with http:// or https://, got %q", key("base_url"), baseURL)
	}
	switch openai.Mode(j.Mode) {
	case openai.ModePerChunk, openai.ModeBatched:
	default:
		add("%s: must be %s or %s, got %q", key("mode"), openai.ModePerChunk, openai.ModeBatched, j.Mode)
	}
	switch openai.ResponseFormat(j.ResponseFormat) {
	case openai.FormatAuto, openai.FormatJSONSchema, openai.FormatJSONObject, openai.FormatText:
	default:
		add("%s: must be one of %s, %s, %s, %s, got %q", key("response_format"),
			openai.FormatAuto, openai.FormatJSONSchema, openai.FormatJSONObject, openai.FormatText, j.ResponseFormat)
	}
	durationAtLeast(add, key("timeout"), j.ClientConfig.Timeout, minDuration)
	if j.MaxConcurrency < 1 {
		add("%s: must be at least 1, got %d", key("max_concurrency"), j.MaxConcurrency)
	}
	if !(j.MaxRequestsPerSecond >= 0) { // also catches NaN
		add("%s: must be 0 (no budget) or positive, got %v", key("max_requests_per_second"), j.MaxRequestsPerSecond)
	}
	if j.MaxRetries < 0 {
		add("%s: must not be negative, got %d", key("max_retries"), j.MaxRetries)
	}
	if j.MaxChunkChars < 1 {
		add("%s: must be at least 1, got %d", key("max_chunk_chars"), j.MaxChunkChars)
	}
	pr := j.Pricing
	for _, price := range [...]struct {
		key   string
		value float64
	}{{key("pricing.input_per_million"), pr.InputPerMillion}, {key("pricing.output_per_million"), pr.OutputPerMillion}} {
		if !(price.value >= 0) || math.IsInf(price.value, 0) { // !(>= 0) also catches NaN
			add("%s: must be finite and not negative, got %v", price.key, price.value)
		}
	}
	if pr.Enabled() && strings.TrimSpace(pr.Currency) == "" {
		add("%s: must name the currency of the prices, e.g. USD", key("pricing.currency"))
	}
	if j.BaseURL != "" && j.ClientConfig.Endpoint != "" && j.BaseURL != j.ClientConfig.Endpoint {
		add("%s and %s: both set, to different URLs; set one", key("base_url"), key("endpoint"))
	}
	return errs
}

// problems reports what is wrong with cache:.
func (c *Cache) problems() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Size < 0 {
		add("cache.size: must be 0 (disabled) or positive, got %d", c.Size)
	}
	switch {
	case c.TTL < 0:
		add("cache.ttl: must be 0 (no expiry) or positive, got %s", c.TTL)
	case c.TTL > 0:
		durationAtLeast(add, "cache.ttl", c.TTL, time.Second)
	}
	return errs
}

// idleConnsPerHost keeps as many idle connections to the judge as requests
// can be in flight: with Go's default of 2, every further request opens a
// new connection (a TLS handshake, against a remote provider).
func idleConnsPerHost(maxConcurrency int) int {
	return max(maxConcurrency, http.DefaultMaxIdleConnsPerHost)
}

// HTTPClientConfig is what the judge's HTTP client is built from (with
// ToClient, where the host's authenticator extensions are at hand): the
// section's client settings without a client-wide timeout, since timeout
// bounds each attempt through its context, which also tells a slow judge
// from the span's own deadline; and, unless set, idle connections for every
// request that can be in flight.
func (j *Judge) HTTPClientConfig() confighttp.ClientConfig {
	cc := j.ClientConfig
	cc.Timeout = 0
	if cc.MaxIdleConnsPerHost == 0 {
		cc.MaxIdleConnsPerHost = idleConnsPerHost(j.MaxConcurrency)
	}
	return cc
}

// NewJudge builds the judge that section j and cache describe, as Validate
// accepts them: the backend j's model names, behind the engine, with
// builtin:lexical first in a cascade. hc is an LLM judge's HTTP client,
// built from HTTPClientConfig; nil gets a plain one with as many idle
// connections. opts are the engine's (observer, clock, jitter).
func NewJudge(j Judge, cache Cache, hc *http.Client, opts ...judge.Option) (*judge.Engine, error) {
	m := j.Model
	if err := m.Err(); err != nil {
		return nil, err
	}
	s := judge.Settings{
		MaxConcurrency:       j.MaxConcurrency,
		MaxRequestsPerSecond: j.MaxRequestsPerSecond,
		MaxRetries:           j.MaxRetries,
		MaxChunkChars:        j.MaxChunkChars,
		CacheSize:            cache.Size,
		CacheTTL:             cache.TTL,
	}
	lexical := builtin.NewLexical(j.MaxChunkChars)
	if m.Builtin() {
		return judge.New(lexical, s, opts...)
	}
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = idleConnsPerHost(j.MaxConcurrency)
		hc = &http.Client{Transport: t}
	}
	be, err := openai.New(openai.Options{
		Provider:       m.Provider(),
		Model:          m.Name(),
		BaseURL:        j.baseURL(),
		APIKey:         string(j.APIKey),
		APIVersion:     j.APIVersion,
		Mode:           openai.Mode(j.Mode),
		ResponseFormat: openai.ResponseFormat(j.ResponseFormat),
		Timeout:        j.ClientConfig.Timeout,
		Criteria:       j.Criteria,
		Secrets:        headerValues(j.ClientConfig.Headers),
		HTTPClient:     hc,
	})
	if err != nil {
		return nil, err
	}
	if m.Cascade() {
		// builtin:lexical cannot read criteria, which can only narrow what
		// is relevant: with them, only its sure negatives are final.
		s.Cascade = &judge.Cascade{First: lexical, MinConfidence: j.Cascade.MinConfidence, OnlyNegatives: j.Criteria != ""}
	}
	e, err := judge.New(be, s, opts...)
	if err != nil {
		be.Close()
		return nil, err
	}
	return e, nil
}

// headerValues are the values of the configured headers, scrubbed from
// whatever the judge's failures quote.
func headerValues(h configopaque.MapList) []string {
	var secrets []string
	for _, v := range h.Iter {
		secrets = append(secrets, string(v))
	}
	return secrets
}

// Version is the judge's judge_version: a short hash of everything besides
// the texts that can change its verdicts, so that equal configurations give
// equal versions on every replica and a change of judge starts new metric
// series. Only what the judge reads counts: builtin:lexical reads no mode,
// format or criteria.
func (j *Judge) Version() string {
	h := sha256.New()
	m := j.Model
	fmt.Fprintf(h, "model=%s\nmax_chunk_chars=%d\n", m.ID(), j.MaxChunkChars)
	if m.Builtin() || m.Cascade() {
		fmt.Fprintf(h, "lexical=%s\n", builtin.LexicalVersion)
	}
	if !m.Builtin() {
		fmt.Fprintf(h, "prompt=%s\nmode=%s\nresponse_format=%s\ncriteria=%q\n", openai.PromptVersion, j.Mode, j.ResponseFormat, j.Criteria)
	}
	if m.Cascade() {
		fmt.Fprintf(h, "min_confidence=%g\n", j.Cascade.MinConfidence)
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}
