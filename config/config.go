// Package config holds the ragprecision processor's configuration: the
// struct that the collector unmarshals from YAML, its defaults and Validate.
package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/judge"
)

// Reference sources: where the text that chunks are judged against comes from.
const (
	// SourceReference is an expected answer carried by the span.
	SourceReference = "reference"
	// SourceAnswer is the generated answer, on the span or (with trace_join)
	// elsewhere in the trace.
	SourceAnswer = "answer"
	// SourceQuery is the user query: it measures relevance to the question
	// rather than to an answer, so it is opt-in.
	SourceQuery = "query"
)

// Config is the configuration of the ragprecision processor, under
// processors: ragprecision: in the collector's YAML.
type Config struct {
	// SamplingPercentage is the share of traces, in [0, 100], whose retrieval
	// spans are judged. The decision is a function of the trace ID alone, so
	// every retrieval span of a trace, on every replica, gets the same one.
	// Default 100.
	SamplingPercentage float64 `mapstructure:"sampling_percentage"`

	// Threshold is the score at or above which a span passes. Default 0.7.
	Threshold float64 `mapstructure:"threshold"`

	// TopK limits scoring to the first TopK chunks; 0 scores all. Default 0.
	TopK int `mapstructure:"top_k"`

	// ReferenceSources lists, in order of preference, where the reference
	// text comes from: reference, answer, query. Default [reference, answer].
	ReferenceSources []string `mapstructure:"reference_sources"`

	// MaxWait is the longest a selected span is held; when it passes, the
	// span goes on unscored with status timeout. Default 30s.
	MaxWait time.Duration `mapstructure:"max_wait"`

	// MaxPendingSpans bounds the spans held at once; candidates selected
	// beyond it pass at once with status overflow. Default 10000.
	MaxPendingSpans int `mapstructure:"max_pending_spans"`

	// MaxPendingBytes bounds the memory of held spans: their encoded size
	// plus the retrieval text read from them. Selected spans beyond it pass
	// at once with status overflow. Default 256 MiB.
	MaxPendingBytes int64 `mapstructure:"max_pending_bytes"`

	// ShutdownTimeout is how long Shutdown lets judgements run before it
	// forwards what is still held with status shutdown. The collector gives
	// processors no deadline of its own, and orchestrators kill a process
	// that does not stop within their grace period. Default 5s.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`

	// MaxChunks bounds the chunks judged per span (after top_k); a span with
	// more passes unscored with status too_large, so one pathological span
	// cannot spend the judge budget. Default 100.
	MaxChunks int `mapstructure:"max_chunks"`

	// MaxRetrievalBytes bounds the bytes of query, answer, reference and
	// chunks read from one span; a span with more passes unscored with status
	// too_large. Default 1 MiB.
	MaxRetrievalBytes int `mapstructure:"max_retrieval_bytes"`

	// MaxSeries bounds the distinct (service_name, data_source, variant)
	// label values of the metrics; those beyond it are reported as "other".
	// Default 1000.
	MaxSeries int `mapstructure:"max_series"`

	// TraceJoin lets a retrieval span without an answer take the answer of
	// its trace, which usually ends after the retrieval span.
	TraceJoin TraceJoin `mapstructure:"trace_join"`

	// Attributes names span attributes that override what the dialect
	// readers find.
	Attributes Attributes `mapstructure:"attributes"`

	// Judge configures who decides relevance.
	Judge Judge `mapstructure:"judge"`

	// Cache configures the verdict cache of LLM judges.
	Cache Cache `mapstructure:"cache"`

	// ProductMetrics says where the rag_* metrics go out.
	ProductMetrics ProductMetrics `mapstructure:"product_metrics"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// TraceJoin configures taking the answer from elsewhere in the trace.
type TraceJoin struct {
	// Enabled turns trace joining on. Default false.
	Enabled bool `mapstructure:"enabled"`
	// Wait is how long a span that needs its trace's answer waits for the
	// trace's root span; after it, the last-ending LLM span seen is used.
	// Answers seen are also remembered this long, for retrieval spans that
	// arrive after them. Must be less than max_wait. Default 10s.
	Wait time.Duration `mapstructure:"wait"`
	// MaxTraces bounds the traces whose answers are remembered. Default
	// 10000.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxBytes bounds the text of the answers remembered. Default 16 MiB.
	MaxBytes int64 `mapstructure:"max_bytes"`
}

// Attributes names span attributes to read instead of the dialects' own.
// An empty name means "use the dialect readers".
type Attributes struct {
	// Query is the attribute holding the user query. Default "".
	Query string `mapstructure:"query"`
	// Answer is the attribute holding the generated answer. Default "".
	Answer string `mapstructure:"answer"`
	// Reference is the attribute holding an expected answer. Default "".
	Reference string `mapstructure:"reference"`
	// Chunks is the attribute holding the ranked chunks (a string array, or
	// a JSON array of strings or of objects with content/text). A span that
	// has it is a candidate whatever its dialect. Default "".
	Chunks string `mapstructure:"chunks"`
	// DataSource is the attribute used as the histogram's data_source label,
	// before gen_ai.data_source.id and the span name. Default "".
	DataSource string `mapstructure:"data_source"`
	// Variant is the attribute, of the span or else of its resource (such
	// as service.version, or a retriever's version), whose value becomes
	// the variant label of the product metrics, so that retrievers running
	// side by side are compared on the same traffic. Default "": no
	// variant label.
	Variant string `mapstructure:"variant"`
}

// Judge configures the relevance judge.
type Judge struct {
	// Model is provider:model, provider one of openai, azure, anthropic,
	// google, ollama, builtin; a bare name means openai; or
	// cascade:provider:model, where builtin:lexical decides the verdicts it
	// is sure of and that LLM the rest. Default builtin:lexical.
	Model string `mapstructure:"model"`
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
	// to the LLM's own agreement. Default 0.7 (see the README's "Choosing a
	// judge").
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

// Default returns the configuration used for every key the YAML leaves out.
// It is the only place defaults are written down.
func Default() *Config {
	return &Config{
		SamplingPercentage: 100,
		Threshold:          0.7,
		TopK:               0,
		ReferenceSources:   []string{SourceReference, SourceAnswer},
		MaxWait:            30 * time.Second,
		MaxPendingSpans:    10000,
		MaxPendingBytes:    256 << 20,
		ShutdownTimeout:    5 * time.Second,
		MaxChunks:          100,
		MaxRetrievalBytes:  1 << 20,
		MaxSeries:          1000,
		TraceJoin:          TraceJoin{Enabled: false, Wait: 10 * time.Second, MaxTraces: 10000, MaxBytes: 16 << 20},
		Judge:              defaultJudge(),
		Cache:              Cache{Size: 100000, TTL: 24 * time.Hour},
		ProductMetrics:     defaultProductMetrics(),
	}
}

func defaultJudge() Judge {
	j := Judge{
		Model:                "builtin:lexical",
		Mode:                 string(judge.ModePerChunk),
		ResponseFormat:       string(judge.FormatAuto),
		MaxConcurrency:       8,
		MaxRequestsPerSecond: 10,
		MaxRetries:           3,
		MaxChunkChars:        4000,
		Pricing:              Pricing{Currency: "USD"},
		Cascade:              Cascade{MinConfidence: 0.7},
		ClientConfig:         confighttp.NewDefaultClientConfig(),
	}
	// Room for a retry inside the default max_wait of 30s: two attempts and
	// a backoff take at most 20.5s.
	j.ClientConfig.Timeout = 10 * time.Second
	return j
}

// BaseURL is judge.base_url, or judge.endpoint when only that is set.
func (j *Judge) baseURL() string {
	if j.BaseURL != "" {
		return j.BaseURL
	}
	return j.ClientConfig.Endpoint
}

// JudgeConfig is the judge package's view of this configuration.
func (c *Config) JudgeConfig() judge.Config {
	var secrets []string
	for _, v := range c.Judge.ClientConfig.Headers.Iter {
		secrets = append(secrets, string(v))
	}
	return judge.Config{
		Model:                c.Judge.Model,
		BaseURL:              c.Judge.baseURL(),
		Secrets:              secrets,
		Criteria:             c.Judge.Criteria,
		MinConfidence:        c.Judge.Cascade.MinConfidence,
		APIKey:               string(c.Judge.APIKey),
		APIVersion:           c.Judge.APIVersion,
		Mode:                 judge.Mode(c.Judge.Mode),
		ResponseFormat:       judge.ResponseFormat(c.Judge.ResponseFormat),
		Timeout:              c.Judge.ClientConfig.Timeout,
		MaxConcurrency:       c.Judge.MaxConcurrency,
		MaxRequestsPerSecond: c.Judge.MaxRequestsPerSecond,
		MaxRetries:           c.Judge.MaxRetries,
		MaxChunkChars:        c.Judge.MaxChunkChars,
		CacheSize:            c.Cache.Size,
		CacheTTL:             c.Cache.TTL,
	}
}

// minDuration is the least duration accepted for a key that needs a real
// wait: anything shorter was almost certainly written without a unit
// (max_wait: 30 is 30 nanoseconds, and every span would time out).
const minDuration = time.Millisecond

// durationAtLeast reports a duration below least, and whether it is fine.
func durationAtLeast(add func(string, ...any), key string, d, least time.Duration) bool {
	switch {
	case d <= 0:
		add("%s: must be positive, got %s", key, d)
	case d < least:
		add("%s: %s is too short to be meant; durations need a unit, e.g. %s: 30s", key, d, key[strings.LastIndex(key, ".")+1:])
	default:
		return true
	}
	return false
}

// checkRetryRoom refuses a judge.timeout that leaves no room inside
// max_wait for what a span's judgement needs: with retries, an attempt, a
// backoff and a second attempt; and, with trace_join, at least one attempt
// after the longest wait for the trace's answer.
func (c *Config) checkRetryRoom(add func(string, ...any)) {
	timeout := c.Judge.ClientConfig.Timeout
	need, what := timeout, "one request"
	if c.Judge.MaxRetries > 0 {
		need, what = 2*timeout+judge.MinRetryBackoff, "a request, a backoff and one retry"
	}
	if need > c.MaxWait {
		add("judge.timeout: %s leaves no room for %s inside max_wait (%s needed, max_wait is %s); lower judge.timeout or raise max_wait",
			timeout, what, need, c.MaxWait)
		return
	}
	if c.TraceJoin.Enabled && c.TraceJoin.Wait+timeout > c.MaxWait {
		add("judge.timeout: %s leaves no room for one request after trace_join.wait inside max_wait (%s needed, max_wait is %s); lower judge.timeout or trace_join.wait, or raise max_wait",
			timeout, c.TraceJoin.Wait+timeout, c.MaxWait)
	}
}

func (c *Config) builtinJudge() bool {
	cascade, m, err := judge.ParseJudge(c.Judge.Model)
	return err == nil && !cascade && m.Provider == judge.ProviderBuiltin
}

// Validate reports every problem at once, each naming its YAML key and what
// is allowed, so that a bad config is refused at start-up in one round.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if math.IsNaN(c.SamplingPercentage) || c.SamplingPercentage < 0 || c.SamplingPercentage > 100 {
		add("sampling_percentage: must be within [0, 100], got %v", c.SamplingPercentage)
	}
	if math.IsNaN(c.Threshold) || c.Threshold < 0 || c.Threshold > 1 {
		add("threshold: must be within [0, 1], got %v", c.Threshold)
	}
	if c.TopK < 0 {
		add("top_k: must be 0 (all chunks) or positive, got %d", c.TopK)
	}
	if len(c.ReferenceSources) == 0 {
		add("reference_sources: must list at least one of %s, %s, %s", SourceReference, SourceAnswer, SourceQuery)
	}
	seen := map[string]bool{}
	for _, s := range c.ReferenceSources {
		switch s {
		case SourceReference, SourceAnswer, SourceQuery:
		default:
			add("reference_sources: unknown source %q; allowed: %s, %s, %s", s, SourceReference, SourceAnswer, SourceQuery)
		}
		if seen[s] {
			add("reference_sources: %q is listed twice", s)
		}
		seen[s] = true
	}
	durationAtLeast(add, "max_wait", c.MaxWait, minDuration)
	if c.MaxPendingSpans < 1 {
		add("max_pending_spans: must be at least 1, got %d", c.MaxPendingSpans)
	}
	if c.MaxPendingBytes < 1 {
		add("max_pending_bytes: must be at least 1, got %d", c.MaxPendingBytes)
	}
	durationAtLeast(add, "shutdown_timeout", c.ShutdownTimeout, minDuration)
	if c.MaxChunks < 1 {
		add("max_chunks: must be at least 1, got %d", c.MaxChunks)
	}
	if c.MaxRetrievalBytes < 1 {
		add("max_retrieval_bytes: must be at least 1, got %d", c.MaxRetrievalBytes)
	}
	if c.MaxSeries < 1 {
		add("max_series: must be at least 1, got %d", c.MaxSeries)
	}
	if c.TraceJoin.MaxTraces < 1 {
		add("trace_join.max_traces: must be at least 1, got %d", c.TraceJoin.MaxTraces)
	}
	if c.TraceJoin.MaxBytes < 1 {
		add("trace_join.max_bytes: must be at least 1, got %d", c.TraceJoin.MaxBytes)
	}
	if c.TraceJoin.Enabled {
		if durationAtLeast(add, "trace_join.wait", c.TraceJoin.Wait, minDuration) && c.MaxWait > 0 && c.TraceJoin.Wait >= c.MaxWait {
			add("trace_join.wait: must be less than max_wait (%s), got %s: the judge needs time after the answer arrives", c.MaxWait, c.TraceJoin.Wait)
		}
	}
	// judge.Config.Validate refuses a negative cache.ttl and a judge.timeout
	// that is not positive; here only what it lets through is checked, so
	// that each problem is reported once.
	if c.Cache.TTL > 0 {
		durationAtLeast(add, "cache.ttl", c.Cache.TTL, time.Second)
	}
	if c.Judge.ClientConfig.Timeout > 0 && durationAtLeast(add, "judge.timeout", c.Judge.ClientConfig.Timeout, minDuration) && c.MaxWait >= minDuration && !c.builtinJudge() {
		c.checkRetryRoom(add)
	}
	pr := c.Judge.Pricing
	for _, price := range [...]struct {
		key   string
		value float64
	}{{"judge.pricing.input_per_million", pr.InputPerMillion}, {"judge.pricing.output_per_million", pr.OutputPerMillion}} {
		if !(price.value >= 0) || math.IsInf(price.value, 0) { // !(>= 0) also catches NaN
			add("%s: must be finite and not negative, got %v", price.key, price.value)
		}
	}
	if pr.Enabled() && strings.TrimSpace(pr.Currency) == "" {
		add("judge.pricing.currency: must name the currency of the prices, e.g. USD")
	}
	if c.Judge.BaseURL != "" && c.Judge.ClientConfig.Endpoint != "" && c.Judge.BaseURL != c.Judge.ClientConfig.Endpoint {
		add("judge.base_url and judge.endpoint: both set, to different URLs; set one")
	}
	for _, a := range [...]struct{ key, name string }{
		{"attributes.query", c.Attributes.Query}, {"attributes.answer", c.Attributes.Answer},
		{"attributes.reference", c.Attributes.Reference}, {"attributes.chunks", c.Attributes.Chunks},
		{"attributes.data_source", c.Attributes.DataSource}, {"attributes.variant", c.Attributes.Variant},
	} {
		if a.name != strings.TrimSpace(a.name) {
			add("%s: attribute name %q has surrounding whitespace", a.key, a.name)
		}
	}
	c.ProductMetrics.validate(add)
	if err := c.JudgeConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
