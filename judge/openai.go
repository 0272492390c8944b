package judge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// openAIBackend judges through any OpenAI-compatible Chat Completions
// endpoint with go-openai, one request per attempt.
type openAIBackend struct {
	ident      string
	model      string
	client     *openai.Client
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

func newOpenAI(c Config, m Model, hc *http.Client, clock Clock) *openAIBackend {
	info := providerInfos[m.Provider]
	baseURL := c.BaseURL
	if baseURL == "" {
		baseURL = info.baseURL
	}
	var cc openai.ClientConfig
	if m.Provider == ProviderAzure {
		cc = openai.DefaultAzureConfig(c.APIKey, baseURL)
		cc.APIVersion = c.APIVersion
		if cc.APIVersion == "" {
			cc.APIVersion = DefaultAzureAPIVersion
		}
		// The model of an azure: judge is the deployment name, used as is.
		cc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		cc = openai.DefaultConfig(c.APIKey)
		cc.BaseURL = baseURL
	}
	// The engine bounds each attempt with its own context; the client's
	// timeout, if any was configured, is left to it.
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client := *hc
	client.Transport = &transport{base: base, clock: clock}
	cc.HTTPClient = &client

	format := c.ResponseFormat
	if format == FormatAuto {
		format = FormatText
		if info.jsonSchema {
			format = FormatJSONSchema
		}
	}
	b := &openAIBackend{
		ident:      m.String(),
		model:      m.Name,
		client:     openai.NewClientWithConfig(cc),
		httpClient: &client,
		mode:       c.Mode,
		format:     format,
		timeout:    c.Timeout,
		criteria:   c.Criteria,
		scrub:      newScrubber(append([]string{c.APIKey}, c.Secrets...)...),
	}
	b.noTemperature.Store(isReasoningModel(m.Name))
	return b
}

func (b *openAIBackend) id() string   { return b.ident }
func (b *openAIBackend) inline() bool { return false }

func (b *openAIBackend) batch() int {
	if b.mode == ModeBatched {
		return 0
	}
	return 1
}

func (b *openAIBackend) close() { b.httpClient.CloseIdleConnections() }

// attempt sends one request: the per-chunk prompt for a single chunk, the
// batched prompt for several. The prompt is built here, when a request can
// be sent at once, never while a judgement waits for a slot.
func (b *openAIBackend) attempt(ctx context.Context, query, ref string, chunks []string) ([]Verdict, Usage, error) {
	var req openai.ChatCompletionRequest
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
			return nil, Usage{}, &callerError{err: ctx.Err(), sent: trace.written.Load()}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", errRequestTimeout, b.timeout)
		}
		e := b.scrub.classify(err, sent, req.Messages[1].Content)
		e.retryAfter = time.Duration(trace.retryAfter.Load())
		if e.Reason == ReasonRejected && e.Status == http.StatusBadRequest && !b.noTemperature.Load() &&
			strings.Contains(strings.ToLower(e.Detail), "temperature") {
			// A model that takes no temperature under a name we do not know
			// (an Azure deployment of a reasoning model): send none from
			// now on, and let this request be tried again.
			b.noTemperature.Store(true)
			e.Reason = ReasonInvalidRequest
			e.retryNow = true
		}
		return nil, Usage{}, e
	}
	usage := Usage{PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)}
	if len(resp.Choices) == 0 {
		return nil, usage, badReply(fmt.Errorf("%w: no choices", errBadReply))
	}
	content := resp.Choices[0].Message.Content
	var verdicts []Verdict
	if len(chunks) == 1 {
		var v Verdict
		v, err = parseVerdict(content)
		verdicts = []Verdict{v}
	} else {
		verdicts, err = parseVerdicts(content, len(chunks))
	}
	if err != nil {
		return nil, usage, badReply(err)
	}
	for i := range verdicts {
		verdicts[i].Stage = b.ident
	}
	return verdicts, usage, nil
}

// callerError is an attempt ended by the caller's context.
type callerError struct {
	err  error
	sent bool
}

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }

func (b *openAIBackend) request(system, user, schemaName string, schema map[string]any) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{
		Model: b.model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
	}
	if !b.noTemperature.Load() {
		// Encoded as 1e-45 and rewritten to 0 by transport: go-openai omits 0.
		r.Temperature = math.SmallestNonzeroFloat32
	}
	switch b.format {
	case FormatJSONSchema:
		r.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: schemaName, Schema: jsonSchema(schema), Strict: true,
			},
		}
	case FormatJSONObject:
		r.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return r
}
