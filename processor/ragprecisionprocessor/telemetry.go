package ragprecisionprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// Metric names (SPEC §6). The histogram has no otelcol_ prefix because it is
// the product's output, which dashboards and alerts query by this name; the
// rest describe the processor's own work.
//
// Counters carry the _total suffix in their names: the collector's
// Prometheus endpoint adds no type suffixes by default, and rules written
// the Prometheus way (rate(x_total[5m])) must match whatever the endpoint's
// settings; an exporter that adds the suffix does not add it twice.
const (
	metricPrecision    = "rag_contextual_precision"
	metricSquares      = "rag_contextual_precision_squares_total"
	metricPrefix       = "otelcol_processor_ragprecision_"
	metricCandidates   = metricPrefix + "candidate_spans_total"
	metricSelected     = metricPrefix + "selected_spans_total"
	metricScored       = metricPrefix + "scored_spans_total"
	metricPassed       = metricPrefix + "passed_spans_total"
	metricUnscored     = metricPrefix + "unscored_spans_total"
	metricRequests     = metricPrefix + "judge_requests_total"
	metricCacheHits    = metricPrefix + "verdict_cache_hits_total"
	metricCacheMisses  = metricPrefix + "verdict_cache_misses_total"
	metricTokens       = metricPrefix + "judge_tokens_total"
	metricCost         = metricPrefix + "judge_cost_total"
	metricLatency      = metricPrefix + "judge_latency_seconds"
	metricJudgeUp      = metricPrefix + "judge_up"
	metricHeld         = metricPrefix + "held_spans"
	metricHeldBytes    = metricPrefix + "held_bytes"
	metricMaxSpans     = metricPrefix + "max_pending_spans"
	metricMaxBytes     = metricPrefix + "max_pending_bytes"
	metricDropped      = metricPrefix + "dropped_spans_total"
	metricSeriesFolded = metricPrefix + "series_folded_total"
	metricVerdicts     = metricPrefix + "verdicts_total"
	metricTraceAnswers = metricPrefix + "trace_answers"
	metricAnswersLost  = metricPrefix + "trace_answers_evicted_total"
)

// Label keys.
const (
	labelServiceName     = "service_name"
	labelDataSource      = "data_source"
	labelReferenceSource = "reference_source"
	labelJudgeModel      = "judge_model"
	labelStatus          = "status"
	labelReason          = "reason"
	labelOutcome         = "outcome"
	labelType            = "type"
	labelCurrency        = "currency"
	labelStage           = "stage"
	// otherValue replaces label values beyond max_series.
	otherValue = "other"
)

// precisionBuckets are the histogram's upper bounds: 0.1, 0.2, … 1.0.
var precisionBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}

// latencyBuckets suit LLM calls: from tens of milliseconds to a minute.
var latencyBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type telemetry struct {
	precision    metric.Float64Histogram
	squares      metric.Float64Counter
	candidates   metric.Int64Counter
	selected     metric.Int64Counter
	scored       metric.Int64Counter
	passed       metric.Int64Counter
	unscored     metric.Int64Counter
	requests     metric.Int64Counter
	cacheHits    metric.Int64Counter
	cacheMisses  metric.Int64Counter
	tokens       metric.Int64Counter
	cost         metric.Float64Counter
	latency      metric.Float64Histogram
	held         metric.Int64ObservableUpDownCounter
	heldBytes    metric.Int64ObservableUpDownCounter
	maxSpans     metric.Int64ObservableGauge
	maxBytes     metric.Int64ObservableGauge
	dropped      metric.Int64Counter
	seriesFolded metric.Int64Counter
	judgeUp      metric.Int64ObservableGauge
	registration metric.Registration
	// traceAnswers are the traces whose answers trace_join remembers.
	traceAnswers        metric.Int64ObservableGauge
	traceAnswersEvicted metric.Int64Counter
	verdicts            metric.Int64Counter
	stageSets           map[stageKey]metric.MeasurementOption
	sourceSets          map[[2]string][]metric.AddOption
	scoreSetsBy         map[[4]string]scoreLabelSets

	judgeModel string
	pricing    config.Pricing
	series     *seriesLimiter
	// healthy is read by the judge_up gauge, holding by the held_spans,
	// held_bytes and trace_answers ones.
	healthy func() bool
	holding func() holding

	// Attribute sets used on hot paths, built once.
	model      metric.MeasurementOption
	promptSet  metric.MeasurementOption
	complSet   metric.MeasurementOption
	costSet    metric.MeasurementOption
	mu         sync.Mutex
	unscoredBy map[[2]string]metric.MeasurementOption
	requestsBy map[[2]string]metric.MeasurementOption
	droppedBy  map[string]metric.MeasurementOption
}

// holding is what the processor holds now, read when metrics are
// collected.
type holding struct {
	spans, bytes int64
	// traceAnswers are the traces whose answers trace_join remembers.
	traceAnswers int64
}

func newTelemetry(set component.TelemetrySettings, cfg *config.Config, judgeModel string, healthy func() bool, heldNow func() holding) (*telemetry, error) {
	maxSeries, pricing := cfg.MaxSeries, cfg.Judge.Pricing
	m := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{
		series:      newSeriesLimiter(maxSeries),
		judgeModel:  judgeModel,
		pricing:     pricing,
		healthy:     healthy,
		holding:     heldNow,
		unscoredBy:  map[[2]string]metric.MeasurementOption{},
		requestsBy:  map[[2]string]metric.MeasurementOption{},
		droppedBy:   map[string]metric.MeasurementOption{},
		stageSets:   map[stageKey]metric.MeasurementOption{},
		sourceSets:  map[[2]string][]metric.AddOption{},
		scoreSetsBy: map[[4]string]scoreLabelSets{},
	}
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
	fc := func(name, desc, unit string) metric.Float64Counter {
		i, err := m.Float64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return i
	}
	t.precision = h(metricPrecision, "Contextual Precision of scored retrieval spans.", "1", precisionBuckets)
	t.squares = fc(metricSquares, "Sum of the squares of the Contextual Precision scores, beside rag_contextual_precision (same labels): with its _sum and _count it gives the variance of the scores over any window and any aggregation.", "1")
	t.candidates = c(metricCandidates, "Retrieval spans recognised by a dialect reader, by service_name and data_source.", "{spans}")
	t.selected = c(metricSelected, "Candidate spans selected by trace-ID sampling, by service_name and data_source.", "{spans}")
	t.scored = c(metricScored, "Selected spans that received a score, by service_name and data_source.", "{spans}")
	t.passed = c(metricPassed, "Scored spans whose Contextual Precision reached the threshold, by service_name and data_source: with scored_spans_total, the exact pass share.", "{spans}")
	t.unscored = c(metricUnscored, "Selected spans forwarded without a score, by status and reason.", "{spans}")
	t.requests = c(metricRequests, "Requests sent to the judge, by judge_model, outcome (ok, retry, error, cancelled) and reason of failure.", "{requests}")
	t.cacheHits = c(metricCacheHits, "Chunk verdicts served without a request of their own (verdict cache, or a request in flight).", "{verdicts}")
	t.cacheMisses = c(metricCacheMisses, "Chunk verdicts that needed a request.", "{verdicts}")
	t.tokens = c(metricTokens, "Tokens the judge reported, by judge_model and type (prompt, completion).", "{tokens}")
	t.cost = fc(metricCost, "What the judge's tokens cost at judge.pricing, by judge_model and currency.", "1")
	t.latency = h(metricLatency, "Latency of requests to the judge, by judge_model.", "s", latencyBuckets)
	t.dropped = c(metricDropped, "Held spans lost: refused permanently by the next consumer, or not forwarded within shutdown_timeout (reason refused, shutdown).", "{spans}")
	t.seriesFolded = c(metricSeriesFolded, "Spans recorded under service_name/data_source \"other\" because max_series was reached.", "{spans}")
	held, err := m.Int64ObservableUpDownCounter(metricHeld, metric.WithDescription("Selected spans held for judging now."), metric.WithUnit("{spans}"))
	errs = append(errs, err)
	t.held = held
	t.heldBytes, err = m.Int64ObservableUpDownCounter(metricHeldBytes, metric.WithDescription("What the held spans weigh against max_pending_bytes now."), metric.WithUnit("By"))
	errs = append(errs, err)
	t.maxSpans, err = m.Int64ObservableGauge(metricMaxSpans, metric.WithDescription("The configured max_pending_spans, for alerts on held_spans near it."), metric.WithUnit("{spans}"))
	errs = append(errs, err)
	t.maxBytes, err = m.Int64ObservableGauge(metricMaxBytes, metric.WithDescription("The configured max_pending_bytes, for alerts on held_bytes near it."), metric.WithUnit("By"))
	errs = append(errs, err)
	up, err := m.Int64ObservableGauge(metricJudgeUp, metric.WithDescription("1 while the judge answers, 0 while its health breaker is open (it failed repeatedly; see the reason of judge_error spans)."), metric.WithUnit("1"))
	errs = append(errs, err)
	t.judgeUp = up
	t.traceAnswers, err = m.Int64ObservableGauge(metricTraceAnswers, metric.WithDescription("Traces whose answers trace_join remembers now, for retrieval spans that arrive after them."), metric.WithUnit("{traces}"))
	errs = append(errs, err)
	t.verdicts = c(metricVerdicts, "Chunk verdicts of scored spans, by the judge that decided them (stage: builtin:lexical or the LLM in a cascade; \"empty\" for chunks without text) and whether they were relevant.", "{verdicts}")
	t.traceAnswersEvicted = c(metricAnswersLost, "Trace answers forgotten before trace_join.wait passed, for lack of room (trace_join.max_traces, max_bytes).", "{traces}")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t.model = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel)))
	t.registration, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		v := int64(0)
		if t.healthy() {
			v = 1
		}
		o.ObserveInt64(t.judgeUp, v, t.model)
		held := t.holding()
		o.ObserveInt64(t.held, held.spans)
		o.ObserveInt64(t.heldBytes, held.bytes)
		o.ObserveInt64(t.traceAnswers, held.traceAnswers)
		o.ObserveInt64(t.maxSpans, int64(cfg.MaxPendingSpans))
		o.ObserveInt64(t.maxBytes, cfg.MaxPendingBytes)
		return nil
	}, t.judgeUp, t.held, t.heldBytes, t.traceAnswers, t.maxSpans, t.maxBytes)
	if err != nil {
		return nil, err
	}
	t.promptSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelType, "prompt")))
	t.complSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelType, "completion")))
	t.costSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelCurrency, pricing.Currency)))

	// Status and outcome series exist from the start, at 0, so that rate()
	// alerts see a series rather than an absence.
	ctx := context.Background()
	for _, s := range allUnscoredStatuses {
		t.unscored.Add(ctx, 0, t.unscoredSet(s, ""))
	}
	for _, o := range judge.Outcomes {
		t.requests.Add(ctx, 0, t.requestSet(o, ""))
	}
	for _, r := range []string{dropRefused, dropShutdown} {
		t.dropped.Add(ctx, 0, t.droppedSet(r))
	}
	t.seriesFolded.Add(ctx, 0)
	t.cacheHits.Add(ctx, 0, t.model)
	t.cacheMisses.Add(ctx, 0, t.model)
	return t, nil
}

func (t *telemetry) close() {
	if t.registration != nil {
		_ = t.registration.Unregister()
	}
}

// unscoredSet is the attribute set of an unscored status and reason.
func (t *telemetry) unscoredSet(status, reason string) metric.MeasurementOption {
	key := [2]string{status, reason}
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.unscoredBy[key]; ok {
		return o
	}
	attrs := []attribute.KeyValue{attribute.String(labelStatus, status)}
	if reason != "" {
		attrs = append(attrs, attribute.String(labelReason, reason))
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	t.unscoredBy[key] = o
	return o
}

func (t *telemetry) requestSet(outcome judge.Outcome, reason judge.Reason) metric.MeasurementOption {
	key := [2]string{string(outcome), string(reason)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.requestsBy[key]; ok {
		return o
	}
	attrs := []attribute.KeyValue{attribute.String(labelJudgeModel, t.judgeModel), attribute.String(labelOutcome, string(outcome))}
	if reason != "" {
		attrs = append(attrs, attribute.String(labelReason, string(reason)))
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	t.requestsBy[key] = o
	return o
}

func (t *telemetry) droppedSet(reason string) metric.MeasurementOption {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.droppedBy[reason]; ok {
		return o
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(labelReason, reason)))
	t.droppedBy[reason] = o
	return o
}

// candidateCounts are the candidates and selected spans of one batch, per
// service and data source. The first few series are kept in place rather
// than in a slice, so that counting the candidates of most batches
// allocates nothing.
type candidateCounts struct {
	few  [4]candidateCount
	n    int // entries of few in use
	more []candidateCount
}

type candidateCount struct {
	service, dataSource string
	candidates, chosen  int64
}

func (c *candidateCounts) add(service, dataSource string, selected bool) {
	e := c.series(service, dataSource)
	e.candidates++
	if selected {
		e.chosen++
	}
}

// series is the entry of a service and data source, added if new.
func (c *candidateCounts) series(service, dataSource string) *candidateCount {
	for i := range c.few[:c.n] {
		if c.few[i].service == service && c.few[i].dataSource == dataSource {
			return &c.few[i]
		}
	}
	for i := range c.more {
		if c.more[i].service == service && c.more[i].dataSource == dataSource {
			return &c.more[i]
		}
	}
	e := candidateCount{service: service, dataSource: dataSource}
	if c.n < len(c.few) {
		c.few[c.n] = e
		c.n++
		return &c.few[c.n-1]
	}
	c.more = append(c.more, e)
	return &c.more[len(c.more)-1]
}

// recordCandidates counts a batch's candidates and selected spans.
func (t *telemetry) recordCandidates(ctx context.Context, c *candidateCounts) {
	for _, e := range c.few[:c.n] {
		t.recordSeriesCandidates(ctx, e)
	}
	for _, e := range c.more {
		t.recordSeriesCandidates(ctx, e)
	}
}

func (t *telemetry) recordSeriesCandidates(ctx context.Context, e candidateCount) {
	service, dataSource, folded := t.series.admit(e.service, e.dataSource)
	if folded {
		t.seriesFolded.Add(ctx, e.candidates)
	}
	set := t.sourceSet(service, dataSource)
	t.candidates.Add(ctx, e.candidates, set...)
	if e.chosen > 0 {
		t.selected.Add(ctx, e.chosen, set...)
	}
}

// recordScore adds a score to the histogram, with ctx's span as its
// exemplar, and to the counters beside it: into tally, when there is one,
// to be added with the other scores of its batch (flushScores), else at
// once. A span's score is recorded on the histogram at once whatever; a
// batch's counters need one Add per series rather than one per span.
func (t *telemetry) recordScore(ctx context.Context, r scoreResult, service, dataSource string, tally *scoreTally) {
	// Folding was counted when the span was recorded as a candidate.
	service, dataSource, _ = t.series.admit(service, dataSource)
	sets := t.scoreSets(service, dataSource, r.refSource, r.judgeID)
	v := r.score.Value
	t.precision.Record(ctx, v, sets.precision)
	one := tallyScores{series: [4]string{service, dataSource, r.refSource, r.judgeID}, sets: sets, scored: 1, squares: v * v}
	if r.passed {
		one.passed = 1
	}
	if tally == nil {
		t.addScores(one)
		return
	}
	tally.addScores(one)
}

// addScores adds a series' scored and passed counts and squared scores.
func (t *telemetry) addScores(s tallyScores) {
	ctx := context.Background()
	t.squares.Add(ctx, s.squares, s.sets.precision)
	t.scored.Add(ctx, s.scored, s.sets.source...)
	if s.passed > 0 {
		t.passed.Add(ctx, s.passed, s.sets.source...)
	}
}

// scoreTally gathers the counters of the spans one ConsumeTraces call
// scores in place (an inline judge's, or the cache's), by series.
type scoreTally struct {
	scores []tallyScores
	stages []tallyStage
}

type tallyScores struct {
	series         [4]string // scoreSets' key
	sets           scoreLabelSets
	scored, passed int64
	squares        float64
}

type tallyStage struct {
	key stageKey
	n   int64
}

func (tl *scoreTally) addScores(s tallyScores) {
	for i := range tl.scores {
		if tl.scores[i].series == s.series {
			tl.scores[i].scored += s.scored
			tl.scores[i].passed += s.passed
			tl.scores[i].squares += s.squares
			return
		}
	}
	tl.scores = append(tl.scores, s)
}

func (tl *scoreTally) addStage(k stageKey, n int64) {
	for i := range tl.stages {
		if tl.stages[i].key == k {
			tl.stages[i].n += n
			return
		}
	}
	tl.stages = append(tl.stages, tallyStage{k, n})
}

// flushScores adds what tally gathered.
func (t *telemetry) flushScores(tally *scoreTally) {
	for _, s := range tally.scores {
		t.addScores(s)
	}
	for _, s := range tally.stages {
		t.addStage(s.key, s.n)
	}
}

// scoreLabelSets are the attribute sets of one series of scores.
type scoreLabelSets struct {
	precision metric.MeasurementOption
	source    []metric.AddOption
}

// scoreSets returns the attribute sets of a series, built once: building a
// set sorts and hashes its attributes, which would otherwise be done twice
// for every scored span. The series are bounded by max_series.
func (t *telemetry) scoreSets(service, dataSource, refSource, judgeID string) scoreLabelSets {
	key := [4]string{service, dataSource, refSource, judgeID}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.scoreSetsBy[key]; ok {
		return s
	}
	s := scoreLabelSets{
		precision: metric.WithAttributeSet(attribute.NewSet(
			attribute.String(labelServiceName, service),
			attribute.String(labelDataSource, dataSource),
			attribute.String(labelReferenceSource, refSource),
			attribute.String(labelJudgeModel, judgeID),
		)),
		source: t.sourceSetLocked(service, dataSource),
	}
	t.scoreSetsBy[key] = s
	return s
}

// sourceSet returns the options of a (service_name, data_source) series,
// built once: candidates are counted on every batch, also when none is
// selected, and building a set allocates, as does the variadic argument of
// Add unless it is a slice passed on whole. The series are bounded by
// max_series.
func (t *telemetry) sourceSet(service, dataSource string) []metric.AddOption {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sourceSetLocked(service, dataSource)
}

func (t *telemetry) sourceSetLocked(service, dataSource string) []metric.AddOption {
	key := [2]string{service, dataSource}
	if o, ok := t.sourceSets[key]; ok {
		return o
	}
	o := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
		attribute.String(labelServiceName, service),
		attribute.String(labelDataSource, dataSource)))}
	t.sourceSets[key] = o
	return o
}

// recordStages counts a scored span's verdicts by the stage that decided
// them and whether they were relevant: into tally when there is one (see
// recordScore), else at once.
func (t *telemetry) recordStages(vs []judge.Verdict, tally *scoreTally) {
	var counts [4]tallyStage
	var more map[stageKey]int64
	used := 0
next:
	for _, v := range vs {
		k := stageKey{v.Stage, v.Relevant}
		for i := range used {
			if counts[i].key == k {
				counts[i].n++
				continue next
			}
		}
		if used < len(counts) {
			counts[used] = tallyStage{k, 1}
			used++
			continue
		}
		if more == nil {
			more = map[stageKey]int64{}
		}
		more[k]++
	}
	add := t.addStage
	if tally != nil {
		add = tally.addStage
	}
	for _, c := range counts[:used] {
		add(c.key, c.n)
	}
	for k, n := range more {
		add(k, n)
	}
}

// stageKey is a series of verdicts_total: the stage that decided, and the
// verdict.
type stageKey struct {
	stage    string
	relevant bool
}

func (t *telemetry) addStage(k stageKey, n int64) {
	t.mu.Lock()
	set, ok := t.stageSets[k]
	if !ok {
		stage := k.stage
		if stage == "" {
			stage = "empty"
		}
		set = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, t.judgeModel),
			attribute.String(labelStage, stage), attribute.Bool("relevant", k.relevant)))
		t.stageSets[k] = set
	}
	t.mu.Unlock()
	t.verdicts.Add(context.Background(), n, set)
}

func (t *telemetry) recordUnscored(status, reason string) {
	t.unscored.Add(context.Background(), 1, t.unscoredSet(status, reason))
}

func (t *telemetry) recordDropped(n int64, reason string) {
	if n > 0 {
		t.dropped.Add(context.Background(), n, t.droppedSet(reason))
	}
}

// judgeRequest records one request to the judge.
func (t *telemetry) judgeRequest(outcome judge.Outcome, reason judge.Reason, latency time.Duration, usage judge.Usage) {
	ctx := context.Background()
	t.requests.Add(ctx, 1, t.requestSet(outcome, reason))
	t.latency.Record(ctx, latency.Seconds(), t.model)
	if usage.PromptTokens > 0 {
		t.tokens.Add(ctx, usage.PromptTokens, t.promptSet)
	}
	if usage.CompletionTokens > 0 {
		t.tokens.Add(ctx, usage.CompletionTokens, t.complSet)
	}
	if t.pricing.Enabled() && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		cost := (float64(usage.PromptTokens)*t.pricing.InputPerMillion + float64(usage.CompletionTokens)*t.pricing.OutputPerMillion) / 1e6
		t.cost.Add(ctx, cost, t.costSet)
	}
}

// cacheLookups records verdicts served with and without a request.
func (t *telemetry) cacheLookups(hits, misses int) {
	ctx := context.Background()
	if hits > 0 {
		t.cacheHits.Add(ctx, int64(hits), t.model)
	}
	if misses > 0 {
		t.cacheMisses.Add(ctx, int64(misses), t.model)
	}
}

// seriesLimiter caps the distinct (service_name, data_source) pairs of the
// precision and candidate metrics. Span names make data_source unbounded in
// the worst case, and every pair multiplies into a dozen Prometheus series;
// past the cap new pairs are recorded as ("other", "other") so that scores
// still count.
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
