package openai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/ragprecision/ragprecision/judge"
)

// Mode selects how chunks are put to the model.
type Mode string

const (
	// ModePerChunk sends one request per chunk.
	ModePerChunk Mode = "per_chunk"
	// ModeBatched sends one request per retrieval, asking for all verdicts.
	ModeBatched Mode = "batched"
)

// ResponseFormat selects the response format the requests ask for.
type ResponseFormat string

const (
	// FormatAuto uses json_schema where the provider honours it and relies on
	// the prompt's JSON instruction elsewhere.
	FormatAuto ResponseFormat = "auto"
	// FormatJSONSchema always sends a strict json_schema response format.
	FormatJSONSchema ResponseFormat = "json_schema"
	// FormatJSONObject sends {"type": "json_object"} (JSON mode).
	FormatJSONObject ResponseFormat = "json_object"
	// FormatText sends no response format; the prompt alone asks for JSON.
	FormatText ResponseFormat = "text"
)

// Options configures New.
type Options struct {
	// Provider is one of Providers: it picks the default endpoint, how the
	// key is sent, and whether json_schema is honoured.
	Provider string
	// Model is the provider's model name (for Azure, the deployment name).
	Model string
	// BaseURL overrides the provider's endpoint (vLLM, llama.cpp, LiteLLM…).
	BaseURL string
	// APIKey is sent as the provider expects it. Never logged.
	APIKey string
	// APIVersion is Azure OpenAI's api-version; "" is
	// DefaultAzureAPIVersion.
	APIVersion string
	// Mode is ModePerChunk or ModeBatched.
	Mode Mode
	// ResponseFormat is one of the Format constants.
	ResponseFormat ResponseFormat
	// Timeout bounds each request.
	Timeout time.Duration
	// Criteria say what "relevant" means in the operator's domain; they go
	// into a fenced block of every prompt and into the cache salt.
	Criteria string
	// Secrets are values (header values, tokens) scrubbed from error texts
	// besides APIKey.
	Secrets []string
	// HTTPClient sends the requests (built from the collector's client
	// settings: TLS, proxy, auth extensions, headers). nil: a plain client.
	HTTPClient *http.Client
}

// Backend judges through an OpenAI-compatible Chat Completions endpoint,
// one request per attempt. It implements judge.Backend.
type Backend struct {
	ident      string
	model      string
	salt       string
	client     *goopenai.Client
	httpClient *http.Client
	mode       Mode
	format     ResponseFormat
	timeout    time.Duration
	criteria   string
	scrub      scrubber
	// noTemperature is set for models that accept no temperature but their
	// default (reasoning models), from the model's name or from the first
	// refusal of one; the wire then carries none.
	noTemperature atomic.Bool
}

var _ judge.Backend = (*Backend)(nil)

// reasoningPrefixes name OpenAI model families that refuse any temperature
// but 1 (go-openai refuses to send one; the API answers 400).
var reasoningPrefixes = []string{"o1", "o3", "o4", "gpt-5", "gpt-6"}

func isReasoningModel(name string) bool {
	for _, p := range reasoningPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// New builds the backend o describes.
func New(o Options) (*Backend, error) {
	info, ok := ProviderNamed(o.Provider)
	switch {
	case !ok:
		return nil, fmt.Errorf("openai: unknown provider %q", o.Provider)
	case o.Model == "":
		return nil, errors.New("openai: no model named")
	case o.Mode != ModePerChunk && o.Mode != ModeBatched:
		return nil, fmt.Errorf("openai: unknown mode %q", o.Mode)
	case o.Timeout <= 0:
		return nil, fmt.Errorf("openai: a request needs a positive timeout, got %s", o.Timeout)
	case o.BaseURL == "" && info.BaseURL == "":
		return nil, fmt.Errorf("openai: provider %s has no endpoint of its own; a base URL is needed", info.Name)
	case o.BaseURL != "" && !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://"):
		return nil, fmt.Errorf("openai: the base URL must be http or https, got %q", o.BaseURL)
	}
	format := o.ResponseFormat
	switch format {
	case FormatAuto:
		format = FormatText
		if info.JSONSchema {
			format = FormatJSONSchema
		}
	case FormatJSONSchema, FormatJSONObject, FormatText:
	default:
		return nil, fmt.Errorf("openai: unknown response format %q", o.ResponseFormat)
	}
	baseURL := o.BaseURL
	if baseURL == "" {
		baseURL = info.BaseURL
	}
	var cc goopenai.ClientConfig
	if info.Name == ProviderAzure {
		cc = goopenai.DefaultAzureConfig(o.APIKey, baseURL)
		cc.APIVersion = o.APIVersion
		if cc.APIVersion == "" {
			cc.APIVersion = DefaultAzureAPIVersion
		}
		// The model of an azure: judge is the deployment name, used as is.
		cc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		cc = goopenai.DefaultConfig(o.APIKey)
		cc.BaseURL = baseURL
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// The engine bounds each attempt with its own context; the client's
	// timeout, if any was configured, is left to it.
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client := *hc
	client.Transport = &transport{base: base, now: time.Now}
	cc.HTTPClient = &client

	ident := info.Name + ":" + o.Model
	b := &Backend{
		ident:      ident,
		model:      o.Model,
		salt:       ident + "\x00" + o.BaseURL + "\x00" + PromptVersion + "\x00" + string(o.Mode) + "\x00" + o.Criteria,
		client:     goopenai.NewClientWithConfig(cc),
		httpClient: &client,
		mode:       o.Mode,
		format:     format,
		timeout:    o.Timeout,
		criteria:   o.Criteria,
		scrub:      newScrubber(append([]string{o.APIKey}, o.Secrets...)...),
	}
	b.noTemperature.Store(isReasoningModel(o.Model))
	return b, nil
}

// ID is "provider:model".
func (b *Backend) ID() string { return b.ident }

// PerChunk reports whether each chunk is asked about in its own request.
func (b *Backend) PerChunk() bool { return b.mode != ModeBatched }

// Inline is false: every attempt is a request over the network.
func (b *Backend) Inline() bool { return false }

// CacheSalt names the model, the endpoint, the prompt version, the mode and
// the criteria: what, besides the texts, decides a verdict.
func (b *Backend) CacheSalt() string { return b.salt }

// Close releases idle connections.
func (b *Backend) Close() { b.httpClient.CloseIdleConnections() }

// Attempt sends one request: the per-chunk prompt for a single chunk, the
// batched prompt for several. The prompt is built here, when a request can
// be sent at once, never while a judgement waits for a slot.
func (b *Backend) Attempt(ctx context.Context, query, ref string, chunks []string) ([]judge.Verdict, judge.Usage, error) {
	var req goopenai.ChatCompletionRequest
	if len(chunks) == 1 {
		req = b.request(systemPerChunk, perChunkMessage(query, ref, b.criteria, chunks[0]), "contextual_precision_verdict", verdictSchema)
	} else {
		req = b.request(systemBatched, batchedMessage(query, ref, b.criteria, chunks), "contextual_precision_verdicts", batchedSchema)
	}
	actx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	actx, trace := withAttemptTrace(actx)
	resp, err := b.client.CreateChatCompletion(actx, req)
	sent := trace.attempted.Load()
	if err != nil {
		if ctx.Err() != nil {
			// The caller's deadline or shutdown, not the judge's failure. It
			// was a request only if it reached the judge.
			return nil, judge.Usage{}, judge.Cancelled(ctx.Err(), trace.written.Load())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", errRequestTimeout, b.timeout)
		}
		e := b.scrub.classify(err, sent, req.Messages[1].Content)
		e.WithRetryAfter(time.Duration(trace.retryAfter.Load()))
		if e.Reason == judge.ReasonRejected && e.Status == http.StatusBadRequest && !b.noTemperature.Load() &&
			strings.Contains(strings.ToLower(e.Detail), "temperature") {
			// A model that takes no temperature under a name we do not know
			// (an Azure deployment of a reasoning model): send none from
			// now on, and let this request be tried again.
			b.noTemperature.Store(true)
			e.Reason = judge.ReasonInvalidRequest
			e.RetryNow()
		}
		return nil, judge.Usage{}, e
	}
	usage := judge.Usage{PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)}
	if len(resp.Choices) == 0 {
		return nil, usage, judge.BadReply(fmt.Errorf("%w: no choices", judge.ErrBadReply))
	}
	content := resp.Choices[0].Message.Content
	var verdicts []judge.Verdict
	if len(chunks) == 1 {
		var v judge.Verdict
		v, err = parseVerdict(content)
		verdicts = []judge.Verdict{v}
	} else {
		verdicts, err = parseVerdicts(content, len(chunks))
	}
	if err != nil {
		return nil, usage, judge.BadReply(err)
	}
	for i := range verdicts {
		verdicts[i].Stage = b.ident
	}
	return verdicts, usage, nil
}

func (b *Backend) request(system, user, schemaName string, schema map[string]any) goopenai.ChatCompletionRequest {
	r := goopenai.ChatCompletionRequest{
		Model: b.model,
		Messages: []goopenai.ChatCompletionMessage{
			{Role: goopenai.ChatMessageRoleSystem, Content: system},
			{Role: goopenai.ChatMessageRoleUser, Content: user},
		},
	}
	if !b.noTemperature.Load() {
		// Encoded as 1e-45 and rewritten to 0 by transport: go-openai omits 0.
		r.Temperature = math.SmallestNonzeroFloat32
	}
	switch b.format {
	case FormatJSONSchema:
		r.ResponseFormat = &goopenai.ChatCompletionResponseFormat{
			Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{
				Name: schemaName, Schema: jsonSchema(schema), Strict: true,
			},
		}
	case FormatJSONObject:
		r.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return r
}
