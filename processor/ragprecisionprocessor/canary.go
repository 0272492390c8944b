package ragprecisionprocessor

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
	"github.com/ragprecision/ragprecision/scoring"
)

// canary re-judges labelled retrievals (judge.canary) every interval,
// through the processor's own judge but without its verdict cache, and
// counts how its verdicts agree with the labels: a judge that changed (a
// provider updating a model under the same name) shows as falling
// agreement, whatever the traffic does, and a judge that works shows even
// when no span is selected. A run's retrievals are spread over the
// interval, so that the canary never makes a burst of requests.
type canary struct {
	engine     *judge.Engine
	retrievals []evalset.Retrieval
	perRun     int
	interval   time.Duration
	// timeout bounds one retrieval's judgement: the judge's own time for a
	// request and its retries, at most the time to the next one.
	timeout    time.Duration
	refSources []string
	metrics    *canaryMetrics
	logger     *zap.Logger

	next     int // the first retrieval of the next run, round the file
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// canaryRetryAfter is how long a retrieval the judge refused at once (its
// budget, its capacity) waits before it is asked again, within its slot.
const canaryRetryAfter = time.Second

func newCanary(cfg *config.Config, engine *judge.Engine, metrics *canaryMetrics, logger *zap.Logger) (*canary, error) {
	c := cfg.Judge.Canary
	retrievals, err := config.LoadCanary(c.File)
	if err != nil {
		return nil, errors.New("judge.canary.file: " + c.File + ": " + err.Error())
	}
	perRun := min(c.MaxRetrievals, len(retrievals))
	slot := c.Interval / time.Duration(perRun)
	attempt := cfg.Judge.ClientConfig.Timeout
	return &canary{
		engine: engine, retrievals: retrievals, perRun: perRun, interval: c.Interval,
		timeout:    min(slot, time.Duration(cfg.Judge.MaxRetries+1)*attempt+time.Duration(cfg.Judge.MaxRetries)*judge.MinRetryBackoff),
		refSources: cfg.ReferenceSources, metrics: metrics, logger: logger,
		stop: make(chan struct{}), done: make(chan struct{}),
	}, nil
}

// run judges a run's retrievals, one per slot of the interval, until
// close; a run cut short by close is not counted.
func (c *canary) run() {
	defer close(c.done)
	for {
		start := time.Now()
		slot := c.interval / time.Duration(c.perRun)
		failed := false
		for i := range c.perRun {
			if !c.sleepUntil(start.Add(time.Duration(i) * slot)) {
				return
			}
			r := c.retrievals[(c.next+i)%len(c.retrievals)]
			if !c.judge(r, start.Add(time.Duration(i+1)*slot)) {
				failed = true
			}
			if c.stopped() {
				return
			}
		}
		c.next = (c.next + c.perRun) % len(c.retrievals)
		c.metrics.run(failed)
		if !c.sleepUntil(start.Add(c.interval)) {
			return
		}
	}
}

// judge judges one labelled retrieval before the end of its slot, asking
// again when the judge refuses it at once, and counts its verdicts against
// the labels. It reports whether it was judged.
func (c *canary) judge(r evalset.Retrieval, slotEnds time.Time) bool {
	ref := canaryReference(r, c.refSources)
	req := judge.Request{Query: r.Query, Reference: ref, Chunks: r.Texts(false), Purpose: judge.PurposeCanary, Fresh: true}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		res, err := c.engine.Judge(ctx, req)
		cancel()
		switch {
		case err == nil && len(res.Verdicts) == len(r.Chunks):
			c.metrics.judged(r.Labels(), res.Verdicts)
			return true
		case errors.Is(err, judge.ErrOverBudget) || errors.Is(err, judge.ErrNoCapacity):
			if time.Now().Add(canaryRetryAfter).Before(slotEnds) && c.sleepUntil(time.Now().Add(canaryRetryAfter)) {
				continue
			}
		}
		if !c.stopped() {
			c.logger.Warn("the drift canary could not judge a labelled retrieval", zap.String("retrieval", r.ID), zap.Error(err))
		}
		return false
	}
}

// canaryReference is what a labelled retrieval's chunks are judged
// against: the first of reference_sources it has, as for a span (the
// configuration refuses a canary file with a retrieval that has none).
func canaryReference(r evalset.Retrieval, sources []string) string {
	for _, s := range sources {
		switch {
		case s == config.SourceReference && r.Reference != "":
			return r.Reference
		case s == config.SourceAnswer && r.Answer != "":
			return r.Answer
		case s == config.SourceQuery && r.Query != "":
			return r.Query
		}
	}
	return ""
}

// sleepUntil waits until t, and reports false when close came first.
func (c *canary) sleepUntil(t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.stop:
		return false
	}
}

func (c *canary) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// halt stops the canary from asking anything more; a judgement under way
// ends with the judge (Close), and wait returns once it has.
func (c *canary) halt() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *canary) wait() { <-c.done }

// canaryMetrics counts the canary's verdicts against the labels: a
// confusion matrix, the error in CP, and its runs.
type canaryMetrics struct {
	ops      *metadata.TelemetryBuilder
	verdicts [2][2]metric.MeasurementOption // by label, verdict: irrelevant 0, relevant 1
	version  metric.MeasurementOption       // judge_model and judge_version
	runs     [2]metric.MeasurementOption    // ok, failed
}

func newCanaryMetrics(ops *metadata.TelemetryBuilder, judgeModel, judgeVersion string) *canaryMetrics {
	m := &canaryMetrics{ops: ops}
	judgeLabels := []attribute.KeyValue{attribute.String(labelJudgeModel, judgeModel), attribute.String(labelJudgeVersion, judgeVersion)}
	m.version = metric.WithAttributeSet(attribute.NewSet(judgeLabels...))
	name := [2]string{"irrelevant", "relevant"}
	ctx := context.Background()
	for l := range 2 {
		for v := range 2 {
			m.verdicts[l][v] = metric.WithAttributeSet(attribute.NewSet(append(judgeLabels,
				attribute.String(labelLabel, name[l]), attribute.String(labelVerdict, name[v]))...))
			ops.ProcessorRagprecisionCanaryVerdictsTotal.Add(ctx, 0, m.verdicts[l][v])
		}
	}
	for i, o := range [2]string{"ok", "failed"} {
		m.runs[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, judgeModel), attribute.String(labelOutcome, o)))
		ops.ProcessorRagprecisionCanaryRunsTotal.Add(ctx, 0, m.runs[i])
	}
	ops.ProcessorRagprecisionCanaryRetrievalsTotal.Add(ctx, 0, m.version)
	ops.ProcessorRagprecisionCanaryCpAbsErrorTotal.Add(ctx, 0, m.version)
	return m
}

// judged counts a retrieval's verdicts against its labels.
func (m *canaryMetrics) judged(labels []bool, vs []judge.Verdict) {
	ctx := context.Background()
	verdicts := make([]bool, len(vs))
	for i, v := range vs {
		verdicts[i] = v.Relevant
		m.ops.ProcessorRagprecisionCanaryVerdictsTotal.Add(ctx, 1, m.verdicts[b2i(labels[i])][b2i(v.Relevant)])
	}
	judgedCP, _ := scoring.ContextualPrecision(verdicts, 0)
	labelledCP, _ := scoring.ContextualPrecision(labels, 0)
	m.ops.ProcessorRagprecisionCanaryRetrievalsTotal.Add(ctx, 1, m.version)
	m.ops.ProcessorRagprecisionCanaryCpAbsErrorTotal.Add(ctx, math.Abs(judgedCP.Value-labelledCP.Value), m.version)
}

// run counts a run that ended.
func (m *canaryMetrics) run(failed bool) {
	m.ops.ProcessorRagprecisionCanaryRunsTotal.Add(context.Background(), 1, m.runs[b2i(failed)])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
