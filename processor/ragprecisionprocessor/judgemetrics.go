package ragprecisionprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// judgeMetrics records what one judge does (the primary, or the shadow):
// its requests, latency, tokens and cost, by the purpose of the judgement
// that paid for each, and its verdict cache.
type judgeMetrics struct {
	ops     *metadata.TelemetryBuilder
	model   string
	pricing config.Pricing
	// modelSet is the judge_model label alone.
	modelSet metric.MeasurementOption

	mu       sync.Mutex
	requests map[requestSeries]metric.MeasurementOption
	tokens   map[tokenSeries]metric.MeasurementOption
	costs    map[judge.Purpose]metric.MeasurementOption
}

type requestSeries struct {
	purpose judge.Purpose
	outcome judge.Outcome
	reason  judge.Reason
}

type tokenSeries struct {
	purpose judge.Purpose
	kind    string // prompt or completion
}

func newJudgeMetrics(ops *metadata.TelemetryBuilder, model string, pricing config.Pricing) *judgeMetrics {
	return &judgeMetrics{
		ops: ops, model: model, pricing: pricing,
		modelSet: metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, model))),
		requests: map[requestSeries]metric.MeasurementOption{},
		tokens:   map[tokenSeries]metric.MeasurementOption{},
		costs:    map[judge.Purpose]metric.MeasurementOption{},
	}
}

// start creates the request series of a purpose at 0, so that rate()
// alerts see a series rather than an absence, and the cache's.
func (m *judgeMetrics) start(purpose judge.Purpose) {
	ctx := context.Background()
	for _, o := range judge.Outcomes {
		m.ops.ProcessorRagprecisionJudgeRequestsTotal.Add(ctx, 0, m.requestSet(requestSeries{purpose: purpose, outcome: o}))
	}
	m.ops.ProcessorRagprecisionVerdictCacheHitsTotal.Add(ctx, 0, m.modelSet)
	m.ops.ProcessorRagprecisionVerdictCacheMissesTotal.Add(ctx, 0, m.modelSet)
}

func (m *judgeMetrics) requestSet(s requestSeries) metric.MeasurementOption {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.requests[s]; ok {
		return o
	}
	attrs := []attribute.KeyValue{attribute.String(labelJudgeModel, m.model), attribute.String(labelPurpose, string(s.purpose)),
		attribute.String(labelOutcome, string(s.outcome))}
	if s.reason != "" {
		attrs = append(attrs, attribute.String(labelReason, string(s.reason)))
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	m.requests[s] = o
	return o
}

func (m *judgeMetrics) tokenSet(s tokenSeries) metric.MeasurementOption {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.tokens[s]; ok {
		return o
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, m.model),
		attribute.String(labelPurpose, string(s.purpose)), attribute.String(labelType, s.kind)))
	m.tokens[s] = o
	return o
}

func (m *judgeMetrics) costSet(purpose judge.Purpose) metric.MeasurementOption {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.costs[purpose]; ok {
		return o
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, m.model),
		attribute.String(labelPurpose, string(purpose)), attribute.String(labelCurrency, m.pricing.Currency)))
	m.costs[purpose] = o
	return o
}

// request records one request to the judge.
func (m *judgeMetrics) request(purpose judge.Purpose, outcome judge.Outcome, reason judge.Reason, latency time.Duration, usage judge.Usage) {
	ctx := context.Background()
	m.ops.ProcessorRagprecisionJudgeRequestsTotal.Add(ctx, 1, m.requestSet(requestSeries{purpose, outcome, reason}))
	m.ops.ProcessorRagprecisionJudgeLatencySeconds.Record(ctx, latency.Seconds(), m.modelSet)
	if usage.PromptTokens > 0 {
		m.ops.ProcessorRagprecisionJudgeTokensTotal.Add(ctx, usage.PromptTokens, m.tokenSet(tokenSeries{purpose, "prompt"}))
	}
	if usage.CompletionTokens > 0 {
		m.ops.ProcessorRagprecisionJudgeTokensTotal.Add(ctx, usage.CompletionTokens, m.tokenSet(tokenSeries{purpose, "completion"}))
	}
	if m.pricing.Enabled() && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		cost := (float64(usage.PromptTokens)*m.pricing.InputPerMillion + float64(usage.CompletionTokens)*m.pricing.OutputPerMillion) / 1e6
		m.ops.ProcessorRagprecisionJudgeCostTotal.Add(ctx, cost, m.costSet(purpose))
	}
}

// cacheLookups records verdicts served with and without a request.
func (m *judgeMetrics) cacheLookups(hits, misses int) {
	ctx := context.Background()
	if hits > 0 {
		m.ops.ProcessorRagprecisionVerdictCacheHitsTotal.Add(ctx, int64(hits), m.modelSet)
	}
	if misses > 0 {
		m.ops.ProcessorRagprecisionVerdictCacheMissesTotal.Add(ctx, int64(misses), m.modelSet)
	}
}
