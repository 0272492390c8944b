// Package config owns the ragprecision processor's configuration: every key
// the collector unmarshals from YAML, its default, and every message that
// refuses a bad value (Validate). It also maps the judge's sections onto
// the judge packages' plain options (NewJudge, judge.go), so that nothing
// downstream names a key or parses one again.
package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

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

	// ShadowJudge judges a share of the scored spans beside the judge.
	ShadowJudge ShadowJudge `mapstructure:"shadow_judge"`

	// AdaptiveSampling chooses the sampling percentage of each series
	// itself, for a judge spend.
	AdaptiveSampling AdaptiveSampling `mapstructure:"adaptive_sampling"`

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
		ShadowJudge:        defaultShadowJudge(),
		AdaptiveSampling:   defaultAdaptiveSampling(),
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
	if c.Judge.ClientConfig.Timeout >= minDuration && c.MaxWait >= minDuration && !c.Judge.Model.Builtin() {
		c.checkRetryRoom(add)
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
	errs = append(errs, c.Judge.problems("judge")...)
	errs = append(errs, c.Judge.Canary.problems("judge", c.ReferenceSources)...)
	errs = append(errs, c.ShadowJudge.problems(c.MaxWait)...)
	errs = append(errs, c.Cache.problems()...)
	errs = append(errs, c.AdaptiveSampling.problems(&c.Judge)...)
	return errors.Join(errs...)
}
