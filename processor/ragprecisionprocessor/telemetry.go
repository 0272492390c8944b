package ragprecisionprocessor

import (
	"context"
	"errors"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
	"github.com/ragprecision/ragprecision/scoring"
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
	labelVariant         = "variant"
	labelRank            = "rank"
	labelJudgeVersion    = "judge_version"
	labelPurpose         = "purpose"
	labelLabel           = "label"
	labelVerdict         = "verdict"
	labelShadowModel     = "shadow_model"
	labelShadowVerdict   = "shadow_verdict"
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
	// diag keeps the diagnostics' counters of product's meter.
	diag *diagnosticSums

	judgeModel   string
	judgeVersion string
	// judge is the primary judge's metrics.
	judge  *judgeMetrics
	series *seriesLimiter

	// Attribute sets used on hot paths, built once per series: building a
	// set sorts and hashes its attributes.
	model metric.MeasurementOption

	mu          sync.Mutex
	unscoredBy  map[[2]string]metric.MeasurementOption
	droppedBy   map[string]metric.MeasurementOption
	stageSets   map[stageKey]metric.MeasurementOption
	sourceSets  map[[2]string][]metric.AddOption
	scoreSetsBy map[scoreKey]*scoreLabelSets
}

// gauges are what the asynchronous instruments read when metrics are
// collected.
type gauges struct {
	healthy func() bool
	holding func() holding
	cfg     *config.Config
}

func newTelemetry(set component.TelemetrySettings, cfg *config.Config, g gauges) (*telemetry, error) {
	judgeModel := cfg.Judge.Model.ID()
	ops, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{
		ops:          ops,
		product:      ops,
		judgeModel:   judgeModel,
		judgeVersion: cfg.Judge.Version(),
		judge:        newJudgeMetrics(ops, judgeModel, cfg.Judge.Pricing),
		series:       newSeriesLimiter(cfg.MaxSeries, cfg.Attributes.Variant != ""),
		unscoredBy:   map[[2]string]metric.MeasurementOption{},
		droppedBy:    map[string]metric.MeasurementOption{},
		stageSets:    map[stageKey]metric.MeasurementOption{},
		sourceSets:   map[[2]string][]metric.AddOption{},
		scoreSetsBy:  map[scoreKey]*scoreLabelSets{},
	}
	t.model = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel)))
	if t.diag, err = newDiagnosticSums(ops); err != nil {
		ops.Shutdown()
		return nil, err
	}
	if err := t.registerGauges(g); err != nil {
		ops.Shutdown()
		return nil, err
	}
	t.startSeries()
	return t, nil
}

// useProductBuilder sends the product metrics to b, and the diagnostics'
// counters to d, from now on (Start, with product_metrics.endpoint set).
func (t *telemetry) useProductBuilder(b *metadata.TelemetryBuilder, d *diagnosticSums) {
	t.product, t.diag = b, d
}

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
	t.judge.start(judge.PurposeTraffic)
	for _, r := range []string{dropRefused, dropShutdown} {
		t.ops.ProcessorRagprecisionDroppedSpansTotal.Add(ctx, 0, t.droppedSet(r))
	}
	t.ops.ProcessorRagprecisionSeriesFoldedTotal.Add(ctx, 0)
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
	admitted, folded := t.series.admit(e.series)
	if folded {
		t.ops.ProcessorRagprecisionSeriesFoldedTotal.Add(ctx, e.candidates)
	}
	set := t.sourceSet(admitted.service, admitted.dataSource)
	t.ops.ProcessorRagprecisionCandidateSpansTotal.Add(ctx, e.candidates, set...)
	if e.chosen > 0 {
		t.ops.ProcessorRagprecisionSelectedSpansTotal.Add(ctx, e.chosen, set...)
	}
}

// scoreKey is a series of score metrics.
type scoreKey struct {
	series
	refSource, judgeID string
}

// The outcome and rank labels, by index (outcomeIndex, rankIndex).
const (
	numOutcomes = 3
	numRanks    = 11 // ranks 1 to 10, and 11+
)

var outcomeOrder = [numOutcomes]scoring.Outcome{scoring.OutcomeIdeal, scoring.OutcomeMisranked, scoring.OutcomeMiss}

func outcomeIndex(o scoring.Outcome) int {
	switch o {
	case scoring.OutcomeIdeal:
		return 0
	case scoring.OutcomeMisranked:
		return 1
	}
	return 2
}

// rankIndex is the index of a 1-based rank's label: its own up to 10, then
// the one of 11+.
func rankIndex(rank int) int { return min(rank, numRanks) - 1 }

// recordScore records a score and its diagnostics: the histograms at once,
// with ctx's span as their exemplar, and the counters beside them into
// tally, when there is one, to be added with the other scores of its batch
// (flushScores), else at once. A batch's counters need one Add per series
// rather than several per span.
func (t *telemetry) recordScore(ctx context.Context, r *scoreResult, s series, tally *scoreTally) {
	// Folding was counted when the span was recorded as a candidate.
	s, _ = t.series.admit(s)
	key := scoreKey{s, r.refSource, r.judgeID}
	sets := t.scoreSets(key)
	v := r.score.Value
	t.product.ContextualPrecision.Record(ctx, v, sets.record...)
	if r.lift != nil {
		t.recordLift(ctx, r.lift.Value, sets)
	}
	one := tallyScores{key: key, sets: sets, scored: 1, squares: v * v}
	if r.sampleRate > 0 {
		one.weight, one.weightedSum = 1/r.sampleRate, v/r.sampleRate
	}
	if r.passed {
		one.passed = 1
	}
	t.recordDiagnostics(r, &one)
	if tally == nil {
		t.addScores(&one)
		return
	}
	tally.addScores(&one)
}

// recordLift records a reranker's lift, and adds it to the gain or the
// loss counter: a histogram's _sum that falls is no counter, so the mean
// lift is read from these two. Both are added to, one of them 0, so that
// both series exist wherever the histogram does.
func (t *telemetry) recordLift(ctx context.Context, lift float64, sets *scoreLabelSets) {
	t.product.RerankLift.Record(ctx, lift, sets.record...)
	t.product.RerankLiftGainTotal.Add(ctx, max(lift, 0), sets.add...)
	t.product.RerankLiftLossTotal.Add(ctx, max(-lift, 0), sets.add...)
}

// recordDiagnostics records a score's diagnostics: its nDCG and reciprocal
// rank at once, its outcome and chunks by rank into one. Their histograms
// carry no exemplars: CP's has the same spans', and an exemplar costs a
// measurement a third more.
func (t *telemetry) recordDiagnostics(r *scoreResult, one *tallyScores) {
	ctx := context.Background()
	t.product.RetrievalNdcg.Record(ctx, r.diag.NDCG, one.sets.record...)
	t.product.RetrievalReciprocalRank.Record(ctx, r.diag.ReciprocalRank, one.sets.record...)
	one.outcomes[outcomeIndex(r.diag.Outcome)]++
	for k, verdict := range r.verdicts[:r.score.K] {
		i := rankIndex(k + 1)
		one.judged[i]++
		if verdict.Relevant {
			one.relevant[i]++
		}
	}
}

// addScores adds a series' counters: scored and passed spans, squared
// scores, and the diagnostics'.
func (t *telemetry) addScores(s *tallyScores) {
	ctx := context.Background()
	t.product.ContextualPrecisionSquaresTotal.Add(ctx, s.squares, s.sets.add...)
	t.product.ContextualPrecisionWeightTotal.Add(ctx, s.weight, s.sets.add...)
	t.product.ContextualPrecisionWeightedSumTotal.Add(ctx, s.weightedSum, s.sets.add...)
	t.ops.ProcessorRagprecisionScoredSpansTotal.Add(ctx, s.scored, s.sets.source...)
	if s.passed > 0 {
		t.ops.ProcessorRagprecisionPassedSpansTotal.Add(ctx, s.passed, s.sets.source...)
	}
	t.addDiagnostics(s)
}

// addDiagnostics adds a series' outcomes and chunks by rank.
func (t *telemetry) addDiagnostics(s *tallyScores) {
	for i, n := range s.outcomes {
		if n > 0 {
			s.sets.outcomes[i].Add(n)
		}
	}
	for i, n := range s.judged {
		if n > 0 {
			s.sets.judged[i].Add(n)
		}
		if r := s.relevant[i]; r > 0 {
			s.sets.relevant[i].Add(r)
		}
	}
}

// flushScores adds what tally gathered.
func (t *telemetry) flushScores(tally *scoreTally) {
	for i := range tally.scores {
		t.addScores(&tally.scores[i])
	}
	for _, s := range tally.stages {
		t.addStage(s.key, s.n)
	}
}

// scoreLabelSets are the attribute sets of one series of scores, each
// ready as the slice an instrument's variadic options take, so that
// recording allocates nothing.
type scoreLabelSets struct {
	record []metric.RecordOption
	add    []metric.AddOption
	source []metric.AddOption
	// The diagnostics' counters of the series, by outcome and by rank.
	outcomes         [numOutcomes]*cumulativeSum
	judged, relevant [numRanks]*cumulativeSum
}

// scoreSets returns the attribute sets of a series, built once; the series
// are bounded by max_series.
func (t *telemetry) scoreSets(key scoreKey) *scoreLabelSets {
	t.mu.Lock()
	s, ok := t.scoreSetsBy[key]
	if !ok {
		s = t.newScoreSetsLocked(key)
	}
	t.mu.Unlock()
	return s
}

func (t *telemetry) newScoreSetsLocked(key scoreKey) *scoreLabelSets {
	labels := []attribute.KeyValue{
		attribute.String(labelServiceName, key.service),
		attribute.String(labelDataSource, key.dataSource),
		attribute.String(labelReferenceSource, key.refSource),
		attribute.String(labelJudgeModel, key.judgeID),
	}
	if key.variant != "" {
		labels = append(labels, attribute.String(labelVariant, key.variant))
	}
	labels = append(labels, attribute.String(labelJudgeVersion, t.judgeVersion))
	set := func(extra ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(append(slices.Clone(labels), extra...)...)
	}
	product := metric.WithAttributeSet(set())
	s := &scoreLabelSets{
		record: []metric.RecordOption{product},
		add:    []metric.AddOption{product},
		source: t.sourceSetLocked(key.service, key.dataSource),
	}
	// The diagnostics' series exist at 0 from the series' first score, so
	// that shares of them have every term from the start.
	for i, o := range outcomeOrder {
		s.outcomes[i] = t.diag.outcomes.sum(set(attribute.String(labelOutcome, string(o))))
	}
	for i, r := range scoring.RankLabels {
		rank := set(attribute.String(labelRank, r))
		s.judged[i], s.relevant[i] = t.diag.judged.sum(rank), t.diag.relevant.sum(rank)
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
