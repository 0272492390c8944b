package ragprecisionprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// Metric names (SPEC §6). The histogram has no otelcol_ prefix because it
// is the product's output, which dashboards and alerts query by this name;
// the rest describe the processor's own work.
const (
	metricPrecision    = "rag_contextual_precision"
	metricPrefix       = "otelcol_processor_ragprecision_"
	metricCandidates   = metricPrefix + "candidate_spans"
	metricSelected     = metricPrefix + "selected_spans"
	metricScored       = metricPrefix + "scored_spans"
	metricUnscored     = metricPrefix + "unscored_spans"
	metricRequests     = metricPrefix + "judge_requests"
	metricCacheHits    = metricPrefix + "verdict_cache_hits"
	metricCacheMisses  = metricPrefix + "verdict_cache_misses"
	metricTokens       = metricPrefix + "judge_tokens"
	metricLatency      = metricPrefix + "judge_latency"
	metricHeld         = metricPrefix + "held_spans"
	metricDropped      = metricPrefix + "dropped_spans"
	metricSeriesFolded = metricPrefix + "series_folded"
)

// Label keys of rag_contextual_precision.
const (
	labelServiceName     = "service_name"
	labelDataSource      = "data_source"
	labelReferenceSource = "reference_source"
	labelJudgeModel      = "judge_model"
	// otherValue replaces label values beyond max_series.
	otherValue = "other"
)

// precisionBuckets are the histogram's upper bounds: 0.1, 0.2, … 1.0.
var precisionBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}

// latencyBuckets suit LLM calls: from tens of milliseconds to a minute.
var latencyBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type telemetry struct {
	precision    metric.Float64Histogram
	candidates   metric.Int64Counter
	selected     metric.Int64Counter
	scored       metric.Int64Counter
	unscored     metric.Int64Counter
	requests     metric.Int64Counter
	cacheHits    metric.Int64Counter
	cacheMisses  metric.Int64Counter
	tokens       metric.Int64Counter
	latency      metric.Float64Histogram
	held         metric.Int64UpDownCounter
	dropped      metric.Int64Counter
	seriesFolded metric.Int64Counter

	series *seriesLimiter
	// Attribute sets used on hot paths, built once.
	statusSets  map[string]metric.MeasurementOption
	outcomeSets map[judge.Outcome]metric.MeasurementOption
	promptSet   metric.MeasurementOption
	complSet    metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings, maxSeries int) (*telemetry, error) {
	m := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{series: newSeriesLimiter(maxSeries)}
	var errs []error
	h := func(name, desc, unit string, buckets []float64) metric.Float64Histogram {
		i, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit(unit), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return i
	}
	c := func(name, desc, unit string) metric.Int64Counter {
		i, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return i
	}
	t.precision = h(metricPrecision, "Contextual Precision of scored retrieval spans.", "1", precisionBuckets)
	t.candidates = c(metricCandidates, "Retrieval spans recognised by a dialect reader.", "{spans}")
	t.selected = c(metricSelected, "Candidate spans selected by trace-ID sampling.", "{spans}")
	t.scored = c(metricScored, "Selected spans that received a score.", "{spans}")
	t.unscored = c(metricUnscored, "Selected spans forwarded without a score, by status.", "{spans}")
	t.requests = c(metricRequests, "Requests to the judge endpoint, by outcome (ok, retry, error).", "{requests}")
	t.cacheHits = c(metricCacheHits, "Chunk verdicts served from the verdict cache.", "{verdicts}")
	t.cacheMisses = c(metricCacheMisses, "Chunk verdicts not found in the verdict cache.", "{verdicts}")
	t.tokens = c(metricTokens, "Tokens the judge reported, by type (prompt, completion).", "{tokens}")
	t.latency = h(metricLatency, "Latency of requests to the judge endpoint.", "s", latencyBuckets)
	t.dropped = c(metricDropped, "Held spans the next consumer refused permanently, or still refused when the processor stopped.", "{spans}")
	t.seriesFolded = c(metricSeriesFolded, "Scores recorded under service_name/data_source \"other\" because max_series was reached.", "{scores}")
	held, err := m.Int64UpDownCounter(metricHeld, metric.WithDescription("Selected spans held for judging now."), metric.WithUnit("{spans}"))
	errs = append(errs, err)
	t.held = held
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	t.statusSets = make(map[string]metric.MeasurementOption)
	for _, s := range allUnscoredStatuses {
		t.statusSets[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("status", s)))
	}
	t.outcomeSets = make(map[judge.Outcome]metric.MeasurementOption)
	for _, o := range []judge.Outcome{judge.OutcomeOK, judge.OutcomeRetry, judge.OutcomeError} {
		t.outcomeSets[o] = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", string(o))))
	}
	// Every status and outcome series exists from the start, at 0, so that
	// rate() alerts see a series rather than an absence.
	for _, s := range allUnscoredStatuses {
		t.unscored.Add(context.Background(), 0, t.statusSets[s])
	}
	for _, o := range t.outcomeSets {
		t.requests.Add(context.Background(), 0, o)
	}
	t.promptSet = metric.WithAttributeSet(attribute.NewSet(attribute.String("type", "prompt")))
	t.complSet = metric.WithAttributeSet(attribute.NewSet(attribute.String("type", "completion")))
	return t, nil
}

// recordScore adds a score to the histogram. ctx carries the scored span's
// context so that the SDK attaches it as an exemplar.
func (t *telemetry) recordScore(ctx context.Context, value float64, service, dataSource, refSource, judgeModel string) {
	service, dataSource, folded := t.series.admit(service, dataSource)
	if folded {
		t.seriesFolded.Add(ctx, 1)
	}
	t.precision.Record(ctx, value, metric.WithAttributeSet(attribute.NewSet(
		attribute.String(labelServiceName, service),
		attribute.String(labelDataSource, dataSource),
		attribute.String(labelReferenceSource, refSource),
		attribute.String(labelJudgeModel, judgeModel),
	)))
}

func (t *telemetry) recordUnscored(status string) {
	t.unscored.Add(context.Background(), 1, t.statusSets[status])
}

// JudgeRequest implements judge.Observer.
func (t *telemetry) JudgeRequest(outcome judge.Outcome, latency time.Duration, usage judge.Usage) {
	ctx := context.Background()
	t.requests.Add(ctx, 1, t.outcomeSets[outcome])
	t.latency.Record(ctx, latency.Seconds())
	if usage.PromptTokens > 0 {
		t.tokens.Add(ctx, usage.PromptTokens, t.promptSet)
	}
	if usage.CompletionTokens > 0 {
		t.tokens.Add(ctx, usage.CompletionTokens, t.complSet)
	}
}

// CacheLookups implements judge.Observer.
func (t *telemetry) CacheLookups(hits, misses int) {
	ctx := context.Background()
	if hits > 0 {
		t.cacheHits.Add(ctx, int64(hits))
	}
	if misses > 0 {
		t.cacheMisses.Add(ctx, int64(misses))
	}
}

// seriesLimiter caps the distinct (service_name, data_source) pairs of the
// histogram. Span names make data_source unbounded in the worst case, and
// every pair multiplies into 12 Prometheus series; past the cap new pairs
// are recorded as ("other", "other") so that scores still count.
type seriesLimiter struct {
	mu   sync.Mutex
	max  int
	seen map[[2]string]struct{}
}

func newSeriesLimiter(max int) *seriesLimiter {
	return &seriesLimiter{max: max, seen: make(map[[2]string]struct{})}
}

func (l *seriesLimiter) admit(service, dataSource string) (string, string, bool) {
	key := [2]string{service, dataSource}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[key]; ok {
		return service, dataSource, false
	}
	if len(l.seen) >= l.max {
		return otherValue, otherValue, true
	}
	l.seen[key] = struct{}{}
	return service, dataSource, false
}
