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
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// Label keys (metadata.yaml's attributes, by the names they are recorded
// under).
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
	labelRelevant        = "relevant"
	// otherValue replaces label values beyond max_series.
	otherValue = "other"
	// emptyStage is the stage of chunks decided without a judge.
	emptyStage = "empty"
)

// telemetry records the processor's metrics through the instruments that
// mdatagen generates from metadata.yaml. The operational metrics go to the
// collector's own telemetry; the product metrics (rag_*) go to product,
// which is the same builder unless product_metrics.endpoint is set.
type telemetry struct {
	ops     *metadata.TelemetryBuilder
	product *metadata.TelemetryBuilder

	judgeModel string
	pricing    config.Pricing
	series     *seriesLimiter

	// Attribute sets used on hot paths, built once per series: building a
	// set sorts and hashes its attributes.
	model     metric.MeasurementOption
	promptSet metric.MeasurementOption
	complSet  metric.MeasurementOption
	costSet   metric.MeasurementOption

	mu          sync.Mutex
	unscoredBy  map[[2]string]metric.MeasurementOption
	requestsBy  map[[2]string]metric.MeasurementOption
	droppedBy   map[string]metric.MeasurementOption
	stageSets   map[stageKey]metric.MeasurementOption
	sourceSets  map[[2]string][]metric.AddOption
	scoreSetsBy map[[4]string]scoreLabelSets
}

// gauges are what the asynchronous instruments read when metrics are
// collected.
type gauges struct {
	healthy func() bool
	holding func() holding
	cfg     *config.Config
}

func newTelemetry(set component.TelemetrySettings, cfg *config.Config, judgeModel string, g gauges) (*telemetry, error) {
	ops, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{
		ops:         ops,
		product:     ops,
		judgeModel:  judgeModel,
		pricing:     cfg.Judge.Pricing,
		series:      newSeriesLimiter(cfg.MaxSeries),
		unscoredBy:  map[[2]string]metric.MeasurementOption{},
		requestsBy:  map[[2]string]metric.MeasurementOption{},
		droppedBy:   map[string]metric.MeasurementOption{},
		stageSets:   map[stageKey]metric.MeasurementOption{},
		sourceSets:  map[[2]string][]metric.AddOption{},
		scoreSetsBy: map[[4]string]scoreLabelSets{},
	}
	t.model = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel)))
	t.promptSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelType, "prompt")))
	t.complSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelType, "completion")))
	t.costSet = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelCurrency, cfg.Judge.Pricing.Currency)))
	if err := t.registerGauges(g); err != nil {
		ops.Shutdown()
		return nil, err
	}
	t.startSeries()
	return t, nil
}

// useProductBuilder sends the product metrics to b from now on (Start, with
// product_metrics.endpoint set).
func (t *telemetry) useProductBuilder(b *metadata.TelemetryBuilder) { t.product = b }

func (t *telemetry) registerGauges(g gauges) error {
	o := t.ops
	return errors.Join(
		o.RegisterProcessorRagprecisionJudgeUpCallback(func(_ context.Context, obs metric.Int64Observer) error {
			v := int64(0)
			if g.healthy() {
				v = 1
			}
			obs.Observe(v, t.model)
			return nil
		}),
		o.RegisterProcessorRagprecisionHeldSpansCallback(func(_ context.Context, obs metric.Int64Observer) error {
			obs.Observe(g.holding().spans)
			return nil
		}),
		o.RegisterProcessorRagprecisionHeldBytesCallback(func(_ context.Context, obs metric.Int64Observer) error {
			obs.Observe(g.holding().bytes)
			return nil
		}),
		o.RegisterProcessorRagprecisionTraceAnswersCallback(func(_ context.Context, obs metric.Int64Observer) error {
			obs.Observe(g.holding().traceAnswers)
			return nil
		}),
		o.RegisterProcessorRagprecisionMaxPendingSpansCallback(func(_ context.Context, obs metric.Int64Observer) error {
			obs.Observe(int64(g.cfg.MaxPendingSpans))
			return nil
		}),
		o.RegisterProcessorRagprecisionMaxPendingBytesCallback(func(_ context.Context, obs metric.Int64Observer) error {
			obs.Observe(g.cfg.MaxPendingBytes)
			return nil
		}),
	)
}

// startSeries creates the series of closed label sets at 0, so that rate()
// alerts see a series rather than an absence.
func (t *telemetry) startSeries() {
	ctx := context.Background()
	for _, s := range ragattr.UnscoredStatuses {
		t.ops.ProcessorRagprecisionUnscoredSpansTotal.Add(ctx, 0, t.unscoredSet(s, ""))
	}
	for _, o := range judge.Outcomes {
		t.ops.ProcessorRagprecisionJudgeRequestsTotal.Add(ctx, 0, t.requestSet(o, ""))
	}
	for _, r := range []string{dropRefused, dropShutdown} {
		t.ops.ProcessorRagprecisionDroppedSpansTotal.Add(ctx, 0, t.droppedSet(r))
	}
	t.ops.ProcessorRagprecisionSeriesFoldedTotal.Add(ctx, 0)
	t.ops.ProcessorRagprecisionVerdictCacheHitsTotal.Add(ctx, 0, t.model)
	t.ops.ProcessorRagprecisionVerdictCacheMissesTotal.Add(ctx, 0, t.model)
}

func (t *telemetry) close() { t.ops.Shutdown() }

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
		t.ops.ProcessorRagprecisionSeriesFoldedTotal.Add(ctx, e.candidates)
	}
	set := t.sourceSet(service, dataSource)
	t.ops.ProcessorRagprecisionCandidateSpansTotal.Add(ctx, e.candidates, set...)
	if e.chosen > 0 {
		t.ops.ProcessorRagprecisionSelectedSpansTotal.Add(ctx, e.chosen, set...)
	}
}

// recordScore adds a score to the histogram, with ctx's span as its
// exemplar, and to the counters beside it: into tally, when there is one,
// to be added with the other scores of its batch (flushScores), else at
// once. Each score reaches the histogram at once; a batch's counters need
// one Add per series rather than one per span.
func (t *telemetry) recordScore(ctx context.Context, r scoreResult, service, dataSource string, tally *scoreTally) {
	// Folding was counted when the span was recorded as a candidate.
	service, dataSource, _ = t.series.admit(service, dataSource)
	sets := t.scoreSets(service, dataSource, r.refSource, r.judgeID)
	v := r.score.Value
	t.product.ContextualPrecision.Record(ctx, v, sets.precision)
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
	t.product.ContextualPrecisionSquaresTotal.Add(ctx, s.squares, s.sets.precision)
	t.ops.ProcessorRagprecisionScoredSpansTotal.Add(ctx, s.scored, s.sets.source...)
	if s.passed > 0 {
		t.ops.ProcessorRagprecisionPassedSpansTotal.Add(ctx, s.passed, s.sets.source...)
	}
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

// scoreSets returns the attribute sets of a series, built once; the series
// are bounded by max_series.
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
// built once: candidates are counted on every batch, and Add allocates for
// its variadic options unless they come as a slice passed on whole.
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
			stage = emptyStage
		}
		set = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, t.judgeModel),
			attribute.String(labelStage, stage), attribute.Bool(labelRelevant, k.relevant)))
		t.stageSets[k] = set
	}
	t.mu.Unlock()
	t.ops.ProcessorRagprecisionVerdictsTotal.Add(context.Background(), n, set)
}

func (t *telemetry) recordUnscored(status, reason string) {
	t.ops.ProcessorRagprecisionUnscoredSpansTotal.Add(context.Background(), 1, t.unscoredSet(status, reason))
}

func (t *telemetry) recordDropped(n int64, reason string) {
	if n > 0 {
		t.ops.ProcessorRagprecisionDroppedSpansTotal.Add(context.Background(), n, t.droppedSet(reason))
	}
}

func (t *telemetry) recordAnswersEvicted(n int64) {
	t.ops.ProcessorRagprecisionTraceAnswersEvictedTotal.Add(context.Background(), n)
}

// judgeRequest records one request to the judge.
func (t *telemetry) judgeRequest(outcome judge.Outcome, reason judge.Reason, latency time.Duration, usage judge.Usage) {
	ctx := context.Background()
	t.ops.ProcessorRagprecisionJudgeRequestsTotal.Add(ctx, 1, t.requestSet(outcome, reason))
	t.ops.ProcessorRagprecisionJudgeLatencySeconds.Record(ctx, latency.Seconds(), t.model)
	if usage.PromptTokens > 0 {
		t.ops.ProcessorRagprecisionJudgeTokensTotal.Add(ctx, usage.PromptTokens, t.promptSet)
	}
	if usage.CompletionTokens > 0 {
		t.ops.ProcessorRagprecisionJudgeTokensTotal.Add(ctx, usage.CompletionTokens, t.complSet)
	}
	if t.pricing.Enabled() && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		cost := (float64(usage.PromptTokens)*t.pricing.InputPerMillion + float64(usage.CompletionTokens)*t.pricing.OutputPerMillion) / 1e6
		t.ops.ProcessorRagprecisionJudgeCostTotal.Add(ctx, cost, t.costSet)
	}
}

// cacheLookups records verdicts served with and without a request.
func (t *telemetry) cacheLookups(hits, misses int) {
	ctx := context.Background()
	if hits > 0 {
		t.ops.ProcessorRagprecisionVerdictCacheHitsTotal.Add(ctx, int64(hits), t.model)
	}
	if misses > 0 {
		t.ops.ProcessorRagprecisionVerdictCacheMissesTotal.Add(ctx, int64(misses), t.model)
	}
}
