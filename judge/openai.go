package judge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Backoff between attempts: exponential from initialBackoff, capped at
// maxBackoff, with "equal jitter" (a random point in the upper half) so
// that replicas hit by the same outage do not retry in lockstep. A server's
// Retry-After replaces the computed delay, up to maxRetryAfter.
const (
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 20 * time.Second
	maxRetryAfter  = 60 * time.Second
)

// openAIJudge judges through any OpenAI-compatible Chat Completions endpoint
// with go-openai.
type openAIJudge struct {
	id            string
	model         string
	client        *openai.Client
	httpClient    *http.Client
	mode          Mode
	format        ResponseFormat
	timeout       time.Duration
	maxRetries    int
	maxChunkChars int
	sem           chan struct{}
	budget        *budget // nil: no budget
	clock         Clock
	jitter        func() float64
	obs           Observer
}

func newOpenAI(c Config, m Model, o options) *openAIJudge {
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
	base := o.transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	hc := &http.Client{Transport: &transport{base: base, clock: o.clock}}
	cc.HTTPClient = hc

	format := c.ResponseFormat
	if format == FormatAuto {
		format = FormatText
		if info.jsonSchema {
			format = FormatJSONSchema
		}
	}
	j := &openAIJudge{
		id:            m.String(),
		model:         m.Name,
		client:        openai.NewClientWithConfig(cc),
		httpClient:    hc,
		mode:          c.Mode,
		format:        format,
		timeout:       c.Timeout,
		maxRetries:    c.MaxRetries,
		maxChunkChars: c.MaxChunkChars,
		sem:           make(chan struct{}, c.MaxConcurrency),
		clock:         o.clock,
		jitter:        o.jitter,
		obs:           o.observer,
	}
	if c.MaxRequestsPerSecond > 0 {
		j.budget = newBudget(c.MaxRequestsPerSecond, o.clock)
	}
	return j
}

func (j *openAIJudge) ID() string { return j.id }

// Close releases idle keep-alive connections.
func (j *openAIJudge) Close() error {
	j.httpClient.CloseIdleConnections()
	return nil
}

// Judge implements Judge.
func (j *openAIJudge) Judge(ctx context.Context, req Request) (Result, error) {
	query, ref, chunks := truncateRequest(req, j.maxChunkChars)
	out := j.judgeChunks(ctx, query, ref, chunks)
	if err := out.err(); err != nil {
		return Result{Usage: out.usage}, err
	}
	return Result{Verdicts: out.verdicts, Usage: out.usage}, nil
}

// truncateRequest cuts the query, the reference and every chunk to max
// characters, as they are sent and as the cache keys them.
func truncateRequest(req Request, max int) (query, ref string, chunks []string) {
	chunks = make([]string, len(req.Chunks))
	for i, c := range req.Chunks {
		chunks[i] = truncateRunes(c, max)
	}
	return truncateRunes(req.Query, max), truncateRunes(req.Reference, max), chunks
}

// errNotDecided marks a chunk that was not judged because another chunk of
// the same judgement failed first: nothing is wrong with the chunk itself.
var errNotDecided = errors.New("not judged: another chunk of the span failed first")

// outcome is a judgement chunk by chunk: errs[i] is nil when verdicts[i]
// was decided. The verdict cache keeps what was decided even when the
// judgement as a whole failed.
type outcome struct {
	verdicts []Verdict
	errs     []error
	usage    Usage
}

// err is the judgement's error: the first chunk's own failure, in preference
// to chunks that were merely not attempted.
func (o outcome) err() error {
	var first error
	for _, e := range o.errs {
		switch {
		case e == nil:
		case errors.Is(e, errNotDecided):
			if first == nil {
				first = e
			}
		default:
			return e
		}
	}
	return first
}

func failAll(n int, err error, usage Usage) outcome {
	o := outcome{verdicts: make([]Verdict, n), errs: make([]error, n), usage: usage}
	for i := range o.errs {
		o.errs[i] = err
	}
	return o
}

// judgeChunks judges already truncated chunks, within the budget.
func (j *openAIJudge) judgeChunks(ctx context.Context, query, ref string, chunks []string) outcome {
	if len(chunks) == 0 {
		return outcome{}
	}
	if j.mode == ModeBatched && len(chunks) > 1 {
		if !j.admit(1) {
			return failAll(len(chunks), ErrOverBudget, Usage{})
		}
		verdicts, usage, err := j.judgeBatched(ctx, query, ref, chunks)
		if err == nil {
			return outcome{verdicts: verdicts, errs: make([]error, len(chunks)), usage: usage}
		}
		if !errors.Is(err, errBadReply) || ctx.Err() != nil {
			return failAll(len(chunks), err, usage)
		}
		// The model does not keep to the batched contract for these chunks
		// (miscounted, or malformed); ask chunk by chunk instead of failing
		// the span.
		if !j.admit(len(chunks)) {
			return failAll(len(chunks), ErrOverBudget, usage)
		}
		o := j.judgePerChunk(ctx, query, ref, chunks)
		o.usage.Add(usage)
		return o
	}
	if !j.admit(len(chunks)) {
		return failAll(len(chunks), ErrOverBudget, Usage{})
	}
	return j.judgePerChunk(ctx, query, ref, chunks)
}

func (j *openAIJudge) admit(n int) bool { return j.budget == nil || j.budget.take(n) }

// judgePerChunk asks for every chunk in parallel (bounded by the semaphore).
// The first chunk that fails stops the others: a span with any unjudged
// chunk gets no score, so their requests would be wasted. Those not decided
// then report errNotDecided.
func (j *openAIJudge) judgePerChunk(ctx context.Context, query, ref string, chunks []string) outcome {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	o := outcome{verdicts: make([]Verdict, len(chunks)), errs: make([]error, len(chunks))}
	var (
		mu     sync.Mutex
		failed bool
		wg     sync.WaitGroup
	)
	for i, chunk := range chunks {
		wg.Go(func() {
			var v Verdict
			usage, err := j.call(inner, j.perChunkRequest(query, ref, chunk), func(content string) (err error) {
				v, err = parseVerdict(content)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			o.usage.Add(usage)
			switch {
			case err == nil:
				o.verdicts[i] = v
			case inner.Err() != nil && ctx.Err() == nil:
				o.errs[i] = errNotDecided // cancelled because a sibling failed
			default:
				o.errs[i] = err
				if !failed {
					failed = true
					cancel()
				}
			}
		})
	}
	wg.Wait()
	return o
}

func (j *openAIJudge) judgeBatched(ctx context.Context, query, ref string, chunks []string) ([]Verdict, Usage, error) {
	var verdicts []Verdict
	usage, err := j.call(ctx, j.batchedRequest(query, ref, chunks), func(content string) (err error) {
		verdicts, err = parseVerdicts(content, len(chunks))
		return err
	})
	return verdicts, usage, err
}

func (j *openAIJudge) perChunkRequest(query, ref, chunk string) openai.ChatCompletionRequest {
	return j.request(systemPerChunk, perChunkMessage(query, ref, chunk), "contextual_precision_verdict", verdictSchema)
}

func (j *openAIJudge) batchedRequest(query, ref string, chunks []string) openai.ChatCompletionRequest {
	return j.request(systemBatched, batchedMessage(query, ref, chunks), "contextual_precision_verdicts", batchedSchema)
}

func (j *openAIJudge) request(system, user, schemaName string, schema map[string]any) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{
		Model: j.model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		// Encoded as 1e-45 and rewritten to 0 by transport: go-openai omits 0.
		Temperature: math.SmallestNonzeroFloat32,
	}
	switch j.format {
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

// call sends req until parse accepts a reply, retrying failed attempts (429,
// 5xx, timeouts, transport errors, replies that break the contract) up to
// maxRetries times with backoff. Client errors such as 400 or 401 are not
// retried: they would fail the same way again. The returned usage includes
// failed attempts, which cost tokens too.
func (j *openAIJudge) call(ctx context.Context, req openai.ChatCompletionRequest, parse func(content string) error) (Usage, error) {
	var total Usage
	for attempt := 0; ; attempt++ {
		usage, latency, hint, sent, err := j.attempt(ctx, req, parse)
		total.Add(usage)
		switch {
		case err == nil:
			j.obs.JudgeRequest(OutcomeOK, latency, usage)
			return total, nil
		case ctx.Err() != nil:
			// The span's own deadline (or shutdown) ended it. A request that
			// was sent still counts: it may have cost tokens.
			if sent {
				j.obs.JudgeRequest(OutcomeError, latency, usage)
			}
			return total, ctx.Err()
		case !retryable(err) || attempt >= j.maxRetries:
			j.obs.JudgeRequest(OutcomeError, latency, usage)
			return total, err
		}
		delay := j.backoff(attempt)
		if hint > 0 {
			delay = min(hint, maxRetryAfter)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			// Waiting would outlast the span: give up now rather than hold
			// the span until it times out.
			j.obs.JudgeRequest(OutcomeError, latency, usage)
			return total, fmt.Errorf("%w (next attempt due in %s, after the span's deadline)", err, delay.Round(time.Millisecond))
		}
		// Retries are requests too: they spend the budget, or the budget
		// would not bound spending when the provider is throttling.
		if !j.admit(1) {
			j.obs.JudgeRequest(OutcomeError, latency, usage)
			return total, ErrOverBudget
		}
		j.obs.JudgeRequest(OutcomeRetry, latency, usage)
		if err := j.clock.Sleep(ctx, delay); err != nil {
			return total, err
		}
	}
}

// attempt makes one request under the concurrency limit and the per-request
// timeout, and returns the server's Retry-After when it sent one. sent is
// false when ctx ended before a request could be made.
func (j *openAIJudge) attempt(ctx context.Context, req openai.ChatCompletionRequest, parse func(string) error) (usage Usage, latency, retryAfter time.Duration, sent bool, err error) {
	select {
	case j.sem <- struct{}{}:
	case <-ctx.Done():
		return Usage{}, 0, 0, false, ctx.Err()
	}
	actx, cancel := context.WithTimeout(ctx, j.timeout)
	actx, hint := withRetryHint(actx)
	start := j.clock.Now()
	resp, err := j.client.CreateChatCompletion(actx, req)
	latency = j.clock.Now().Sub(start)
	cancel()
	<-j.sem

	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			// Not wrapped: this is the judge's failure, not the caller's
			// deadline, and must not read as one.
			err = fmt.Errorf("%w after %s", errRequestTimeout, j.timeout)
		}
		return Usage{}, latency, hint.get(), true, err
	}
	usage = Usage{PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)}
	if len(resp.Choices) == 0 {
		return usage, latency, 0, true, fmt.Errorf("%w: no choices", errBadReply)
	}
	return usage, latency, 0, true, parse(resp.Choices[0].Message.Content)
}

// errRequestTimeout is a request that outlived judge.timeout.
var errRequestTimeout = errors.New("judge request timed out")

// retryable reports whether another attempt could succeed. Only a client
// error from the server (400, 401, 403, 404, 422 …) is final: the same
// request would be refused the same way. Everything else — 408, 429, 5xx,
// timeouts, broken connections, replies that are not the contract's JSON —
// may pass next time.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return retryableStatus(apiErr.HTTPStatusCode)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return retryableStatus(reqErr.HTTPStatusCode)
	}
	return true
}

func retryableStatus(code int) bool {
	return code < 400 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

func (j *openAIJudge) backoff(attempt int) time.Duration {
	d := initialBackoff << min(attempt, 16)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	half := d / 2
	return half + time.Duration(j.jitter()*float64(half))
}
