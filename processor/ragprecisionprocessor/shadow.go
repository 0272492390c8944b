package ragprecisionprocessor

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
	"github.com/ragprecision/ragprecision/scoring"
)

// shadow is the shadow judge (shadow_judge): a second judge, with its own
// endpoint, key, limits and budget, that judges a share of the scored spans
// beside the primary one. Its score goes on the span beside the primary's
// and its agreement with it is counted; it never changes the primary
// score, status or metrics, and a span waits for it at most until its
// max_wait (see heldspan.go).
type shadow struct {
	engine *judge.Engine
	id     string
	// sampler picks the spans: a trace at the primary's rate times
	// shadow_judge.percentage, so that of the spans scored that share is
	// judged twice, the same traces on every replica.
	sampler sampler
	ops     *metadata.TelemetryBuilder
	// spanSets are shadow_spans_total's label sets by status;
	// verdictSets shadow_verdicts_total's by the two verdicts
	// (irrelevant 0, relevant 1).
	spanSets    map[string]metric.MeasurementOption
	verdictSets [2][2]metric.MeasurementOption
}

// judged is a judgement's outcome, kept until the span's other judgement
// ends.
type judged struct {
	res judge.Result
	err error
}

// shadowJudgement is a held span's judgement by the shadow judge.
type shadowJudgement struct {
	ticket *judge.Ticket
	// done is set, with result, when the judgement has ended.
	done   bool
	result judged
}

// errPrimaryUnscored ends a shadow judgement whose span got no score: with
// nothing to compare with, it would only hold the span.
var errPrimaryUnscored = errors.New("the primary judge gave the span no score")

func newShadow(ctx context.Context, cfg *config.Config, host component.Host, set component.TelemetrySettings, ops *metadata.TelemetryBuilder, primaryModel string) (*shadow, error) {
	sj := cfg.ShadowJudge.Judge
	var hc *http.Client
	if !sj.Model.Builtin() {
		var err error
		if hc, err = judgeHTTPClient(ctx, sj, host, set); err != nil {
			return nil, err
		}
	}
	id := sj.Model.ID()
	metrics := newJudgeMetrics(ops, id, sj.Pricing)
	metrics.start(judge.PurposeShadow)
	logger := set.Logger.With(zap.String("shadow_judge", id))
	health := func(err error) {
		if err != nil {
			logger.Warn("the shadow judge is failing; spans go on with the primary judge's score alone", zap.Error(err))
		} else {
			logger.Info("the shadow judge answers again")
		}
	}
	engine, err := config.NewJudge(sj, cfg.Cache, hc, judge.WithObserver(judgeObserver{metrics: metrics, health: health}))
	if err != nil {
		return nil, err
	}
	s := &shadow{engine: engine, id: id, sampler: newSampler(cfg.SamplingPercentage * cfg.ShadowJudge.Percentage / 100),
		ops: ops, spanSets: map[string]metric.MeasurementOption{}}
	ctx = context.Background()
	for _, status := range []string{ragattr.StatusScored, ragattr.StatusJudgeError, ragattr.StatusTimeout, ragattr.StatusBudget, ragattr.StatusOverflow, ragattr.StatusShutdown} {
		s.spanSets[status] = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelShadowModel, id), attribute.String(labelStatus, status)))
		ops.ProcessorRagprecisionShadowSpansTotal.Add(ctx, 0, s.spanSets[status])
	}
	name := [2]string{"irrelevant", "relevant"}
	for v := range 2 {
		for sv := range 2 {
			s.verdictSets[v][sv] = metric.WithAttributeSet(attribute.NewSet(attribute.String(labelJudgeModel, primaryModel),
				attribute.String(labelShadowModel, id), attribute.String(labelVerdict, name[v]), attribute.String(labelShadowVerdict, name[sv])))
			ops.ProcessorRagprecisionShadowVerdictsTotal.Add(ctx, 0, s.verdictSets[v][sv])
		}
	}
	return s, nil
}

// admit asks the shadow judge to judge req within the span's time; a
// refusal (its budget, its capacity, its outage) is counted and leaves the
// span to the primary alone.
func (s *shadow) admit(req judge.Request, within time.Duration) (*shadowJudgement, string) {
	req.Purpose = judge.PurposeShadow
	t, err := s.engine.Admit(req, within)
	if err != nil {
		status, _ := statusOf(err)
		return nil, status
	}
	return &shadowJudgement{ticket: t}, ""
}

// annotate writes the shadow's score beside the primary's, and counts
// their agreement, chunk by chunk; primary are the primary's verdicts of a
// scored span.
func (s *shadow) annotate(span ptrace.Span, primary []judge.Verdict, sj *shadowJudgement) {
	status, _ := statusOf(sj.result.err)
	vs := sj.result.res.Verdicts
	if status == ragattr.StatusScored && len(vs) != len(primary) {
		status = ragattr.StatusJudgeError
	}
	ctx := context.Background()
	s.ops.ProcessorRagprecisionShadowSpansTotal.Add(ctx, 1, s.spanSets[status])
	if status != ragattr.StatusScored {
		return
	}
	verdicts := make([]bool, len(vs))
	for i, v := range vs {
		verdicts[i] = v.Relevant
		s.ops.ProcessorRagprecisionShadowVerdictsTotal.Add(ctx, 1, s.verdictSets[b2i(primary[i].Relevant)][b2i(v.Relevant)])
	}
	score, _ := scoring.ContextualPrecision(verdicts, 0)
	attrs := span.Attributes()
	attrs.PutDouble(ragattr.Shadow, score.Value)
	attrs.PutStr(ragattr.ShadowJudge, s.id)
}

// count counts a shadow judgement that could not start.
func (s *shadow) count(status string) {
	s.ops.ProcessorRagprecisionShadowSpansTotal.Add(context.Background(), 1, s.spanSets[status])
}
