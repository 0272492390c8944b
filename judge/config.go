package judge

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Mode selects how chunks are put to an LLM judge.
type Mode string

const (
	// ModePerChunk sends one request per chunk.
	ModePerChunk Mode = "per_chunk"
	// ModeBatched sends one request per span, asking for all verdicts.
	ModeBatched Mode = "batched"
)

// ResponseFormat selects the response_format sent to an LLM judge.
type ResponseFormat string

const (
	// FormatAuto uses json_schema where the provider honours it and relies on
	// the prompt's JSON instruction elsewhere.
	FormatAuto ResponseFormat = "auto"
	// FormatJSONSchema always sends a strict json_schema response format.
	FormatJSONSchema ResponseFormat = "json_schema"
	// FormatJSONObject sends {"type": "json_object"} (JSON mode).
	FormatJSONObject ResponseFormat = "json_object"
	// FormatText sends no response_format; the prompt alone asks for JSON.
	FormatText ResponseFormat = "text"
)

// Config configures New. The processor's config maps onto it one to one.
type Config struct {
	// Model is "provider:model"; see ParseModel.
	Model string
	// BaseURL overrides the provider's endpoint (vLLM, llama.cpp, LiteLLM…).
	BaseURL string
	// APIKey is sent as the provider expects it. Never logged.
	APIKey string
	// APIVersion is the Azure OpenAI api-version query parameter.
	APIVersion string
	// Mode is per_chunk or batched.
	Mode Mode
	// ResponseFormat is auto, json_schema, json_object or text.
	ResponseFormat ResponseFormat
	// Timeout bounds each HTTP request.
	Timeout time.Duration
	// MaxConcurrency bounds HTTP requests in flight.
	MaxConcurrency int
	// MaxRequestsPerSecond is the request budget; 0 means no budget.
	MaxRequestsPerSecond float64
	// MaxRetries is how many times a failed request is tried again.
	MaxRetries int
	// MaxChunkChars truncates each chunk (and the reference) to that many
	// characters before it is judged.
	MaxChunkChars int
	// CacheSize is the verdict cache's capacity in verdicts; 0 disables it.
	CacheSize int
	// CacheTTL is how long a cached verdict is served; 0 means until evicted.
	CacheTTL time.Duration
	// Secrets are values (header values, tokens) scrubbed from error texts
	// besides APIKey.
	Secrets []string
	// Criteria says what "relevant" means in the operator's domain ("must
	// state the policy number"). LLM judges get it in a fenced block of
	// their prompt; it is part of every cache key. builtin:lexical ignores
	// it.
	Criteria string
	// MinConfidence is the confidence from which builtin:lexical's verdicts
	// are final in a cascade ("cascade:provider:model"); the LLM decides
	// the rest.
	MinConfidence float64
}

// maxCriteriaBytes bounds judge.criteria, which goes into every prompt.
const maxCriteriaBytes = 4096

// DefaultAzureAPIVersion is the Azure OpenAI GA api-version that supports
// json_schema response formats.
const DefaultAzureAPIVersion = "2024-10-21"

// Validate reports what is wrong with c, naming fields by their processor
// config keys under judge:.
func (c Config) Validate() error {
	var errs []error
	cascade, m, err := ParseJudge(c.Model)
	if err != nil {
		errs = append(errs, fmt.Errorf("judge.model: %w", err))
	}
	if cascade && !(c.MinConfidence >= 0 && c.MinConfidence <= 1) {
		errs = append(errs, fmt.Errorf("judge.cascade.min_confidence: must be within [0, 1], got %v", c.MinConfidence))
	}
	if strings.Contains(c.Criteria, "\x00") || len(c.Criteria) > maxCriteriaBytes {
		errs = append(errs, fmt.Errorf("judge.criteria: must be text of at most %d bytes", maxCriteriaBytes))
	}
	if info, ok := providerInfos[m.Provider]; ok {
		if info.baseURL == "" && c.BaseURL == "" {
			errs = append(errs, fmt.Errorf("judge.base_url: required for provider %s (e.g. https://<resource>.openai.azure.com)", m.Provider))
		}
		if info.needsKey && c.APIKey == "" && c.BaseURL == "" {
			errs = append(errs, fmt.Errorf("judge.api_key: required for provider %s; set it, e.g. api_key: ${env:OPENAI_API_KEY}", m.Provider))
		}
	}
	if c.BaseURL != "" && !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		errs = append(errs, fmt.Errorf("judge.base_url: must start with http:// or https://, got %q", c.BaseURL))
	}
	switch c.Mode {
	case ModePerChunk, ModeBatched:
	default:
		errs = append(errs, fmt.Errorf("judge.mode: must be %s or %s, got %q", ModePerChunk, ModeBatched, c.Mode))
	}
	switch c.ResponseFormat {
	case FormatAuto, FormatJSONSchema, FormatJSONObject, FormatText:
	default:
		errs = append(errs, fmt.Errorf("judge.response_format: must be one of auto, json_schema, json_object, text, got %q", c.ResponseFormat))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("judge.timeout: must be positive, got %s", c.Timeout))
	}
	if c.MaxConcurrency < 1 {
		errs = append(errs, fmt.Errorf("judge.max_concurrency: must be at least 1, got %d", c.MaxConcurrency))
	}
	if !(c.MaxRequestsPerSecond >= 0) { // also catches NaN
		errs = append(errs, fmt.Errorf("judge.max_requests_per_second: must be 0 (no budget) or positive, got %v", c.MaxRequestsPerSecond))
	}
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("judge.max_retries: must not be negative, got %d", c.MaxRetries))
	}
	if c.MaxChunkChars < 1 {
		errs = append(errs, fmt.Errorf("judge.max_chunk_chars: must be at least 1, got %d", c.MaxChunkChars))
	}
	if c.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("cache.size: must be 0 (disabled) or positive, got %d", c.CacheSize))
	}
	if c.CacheTTL < 0 {
		errs = append(errs, fmt.Errorf("cache.ttl: must be 0 (no expiry) or positive, got %s", c.CacheTTL))
	}
	return errors.Join(errs...)
}
