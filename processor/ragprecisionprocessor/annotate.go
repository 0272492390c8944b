package ragprecisionprocessor

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

// Reasons of overflow (the judge's reasons of judge_error come from
// judge.Reason).
const (
	reasonPendingSpans  = "max_pending_spans"
	reasonPendingBytes  = "max_pending_bytes"
	reasonJudgeCapacity = "judge_capacity"
	// reasonUnknown is a judge failure of no known kind.
	reasonUnknown = "unknown"
)

// Reasons of dropped_spans.
const (
	dropRefused  = "refused"
	dropShutdown = "shutdown"
)

// annotate writes the outcome of a judgement onto span: the score, or the
// status (and reason) it goes on with, and reports whether it scored. A
// score's counters go into tally when there is one (see
// telemetry.recordScore).
func (p *ragProcessor) annotate(span ptrace.Span, h *heldSpan, refSource string, res judge.Result, err error, tally *scoreTally) bool {
	status, reason := statusOf(err)
	judged := h.chunks
	if h.rerank != nil {
		judged += h.rerank.extra
	}
	if status == ragattr.StatusScored && len(res.Verdicts) != judged {
		status, reason = ragattr.StatusJudgeError, string(judge.ReasonBadReply)
	}
	if status != ragattr.StatusScored {
		p.markUnscoredErr(span, status, reason, err)
		return false
	}
	// The output ranking's verdicts come first; a rerank span's input
	// documents the output lacks follow.
	output := res.Verdicts[:h.chunks]
	verdicts := make([]bool, len(output))
	for i, v := range output {
		verdicts[i] = v.Relevant
	}
	// The chunks are already cut to top_k.
	score, _ := scoring.ContextualPrecision(verdicts, 0)
	diag, _ := scoring.Diagnose(verdicts, 0)
	r := scoreResult{
		score:        score,
		diag:         diag,
		passed:       scoring.Passed(score.Value, p.cfg.Threshold),
		verdicts:     output,
		refSource:    refSource,
		judgeID:      p.judgeID,
		judgeVersion: p.tel.judgeVersion,
		sampleRate:   h.sampleRate,
	}
	if h.rerank != nil {
		if lift, ok := scoring.RerankLift(verdicts, h.rerank.verdicts(res.Verdicts)); ok {
			r.lift = &lift
		}
	}
	markScored(span, &r, p.now())
	p.tel.recordScore(exemplarContext(span), &r, h.series, tally)
	p.tel.recordStages(res.Verdicts, tally)
	return true
}

// markUnscored gives a selected span that could not be scored its status,
// and its reason when it has one, counts it, and tells the operator
// (rate-limited) why.
func (p *ragProcessor) markUnscored(span ptrace.Span, status, reason string) {
	p.markUnscoredErr(span, status, reason, nil)
}

// markUnscoredErr is markUnscored with the judge's failure, which the log
// line quotes.
func (p *ragProcessor) markUnscoredErr(span ptrace.Span, status, reason string, err error) {
	span.Attributes().PutStr(ragattr.Status, status)
	if reason != "" {
		span.Attributes().PutStr(ragattr.Reason, reason)
	}
	p.tel.recordUnscored(status, reason)
	p.warn.unscored(status, reason, err)
}

// statusOf maps a judgement's error to the span's status and its reason.
func statusOf(err error) (status, reason string) {
	switch {
	case err == nil:
		return ragattr.StatusScored, ""
	case errors.Is(err, judge.ErrOverBudget):
		return ragattr.StatusBudget, ""
	case errors.Is(err, judge.ErrNoCapacity):
		return ragattr.StatusOverflow, reasonJudgeCapacity
	case errors.Is(err, judge.ErrDeadline):
		return ragattr.StatusTimeout, ""
	case errors.Is(err, judge.ErrClosed):
		return ragattr.StatusShutdown, ""
	}
	if r := judge.ReasonOf(err); r != "" {
		return ragattr.StatusJudgeError, string(r)
	}
	return ragattr.StatusJudgeError, reasonUnknown
}

// scoreResult is everything written onto a scored span.
type scoreResult struct {
	score        scoring.Score
	diag         scoring.Diagnostics
	passed       bool
	verdicts     []judge.Verdict
	refSource    string
	judgeID      string
	judgeVersion string
	sampleRate   float64
	// lift compares a rerank span's input ranking with its output; nil
	// for a span without one.
	lift *scoring.Lift
}

// markScored writes the score attributes and the gen_ai.evaluation.result
// event onto span.
func markScored(span ptrace.Span, r *scoreResult, now time.Time) {
	attrs := span.Attributes()
	// Room for the fifteen attributes (seventeen with a reranker's input)
	// at once, rather than the slice growing (and being copied) a few
	// times on the way.
	n := 15
	if r.lift != nil {
		n += 2
	}
	attrs.EnsureCapacity(attrs.Len() + n)
	attrs.PutDouble(ragattr.Precision, r.score.Value)
	attrs.PutBool(ragattr.Passed, r.passed)
	attrs.PutInt(ragattr.K, int64(r.score.K))
	attrs.PutInt(ragattr.Relevant, int64(r.score.Relevant))
	vs := attrs.PutEmptySlice(ragattr.Verdicts)
	vs.EnsureCapacity(r.score.K)
	for _, v := range r.verdicts[:r.score.K] {
		vs.AppendEmpty().SetBool(v.Relevant)
	}
	attrs.PutStr(ragattr.ReferenceSource, r.refSource)
	attrs.PutStr(ragattr.Judge, r.judgeID)
	attrs.PutStr(ragattr.JudgeVersion, r.judgeVersion)
	attrs.PutDouble(ragattr.SampleRate, r.sampleRate)
	attrs.PutStr(ragattr.Status, ragattr.StatusScored)
	putDiagnostics(attrs, &r.diag)
	if r.lift != nil {
		attrs.PutDouble(ragattr.RerankInputPrecision, r.lift.InputCP)
		attrs.PutDouble(ragattr.RerankInputNDCG, r.lift.InputNDCG)
	}

	ev := span.Events().AppendEmpty()
	ev.SetName(ragattr.EvaluationEvent)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(now))
	ea := ev.Attributes()
	ea.EnsureCapacity(5)
	ea.PutStr(ragattr.EvaluationName, ragattr.ContextualPrecision)
	ea.PutDouble(ragattr.EvaluationScoreValue, r.score.Value)
	label := ragattr.LabelFail
	if r.passed {
		label = ragattr.LabelPass
	}
	ea.PutStr(ragattr.EvaluationScoreLabel, label)
	ea.PutStr(ragattr.EvaluationExplanation, explain(r))
	ea.PutStr(ragattr.JudgeVersion, r.judgeVersion)
}

// putDiagnostics writes a scored retrieval's diagnostics.
func putDiagnostics(attrs pcommon.Map, d *scoring.Diagnostics) {
	attrs.PutStr(ragattr.RetrievalOutcome, string(d.Outcome))
	attrs.PutInt(ragattr.FirstRelevantRank, int64(d.FirstRelevantRank))
	attrs.PutDouble(ragattr.ReciprocalRank, d.ReciprocalRank)
	attrs.PutDouble(ragattr.NDCG, d.NDCG)
	attrs.PutDouble(ragattr.PrecisionAtK, d.Precision)
}

// maxExplainedReasons bounds how many judge reasons the explanation quotes.
const maxExplainedReasons = 3

// explain says, in one line, why the span scored what it did: which ranks
// were relevant and the judge's reasons for the first few chunks. Reasons are
// one sentence each and the span already holds the texts they speak of.
func explain(r *scoreResult) string {
	vs := r.verdicts[:r.score.K]
	size := 160 + len(r.judgeID)
	for i := 0; i < len(vs) && i < maxExplainedReasons; i++ {
		size += len(vs[i].Reason) + 20
	}
	b := make([]byte, 0, size)
	b = strconv.AppendInt(b, int64(r.score.Relevant), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(r.score.K), 10)
	b = append(b, " chunks relevant"...)
	if r.score.Relevant > 0 {
		b = append(b, " at ranks "...)
		b = appendRanks(b, vs, func(v judge.Verdict) bool { return v.Relevant })
	}
	if hasEmpty(vs) {
		// Said apart from the quoted reasons, which stop after a few.
		b = append(b, "; empty, so not relevant without asking the judge: rank "...)
		b = appendRanks(b, vs, func(v judge.Verdict) bool { return v.Reason == judge.EmptyChunkReason })
	}
	b = append(b, "; judged against the "...)
	b = append(b, r.refSource...)
	b = append(b, " by "...)
	b = append(b, r.judgeID...)
	if stages := stageCounts(vs); len(stages) > 1 {
		// A cascade: say which stage decided how many.
		b = append(b, " ("...)
		for i, s := range stages {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(s.n), 10)
			b = append(b, " by "...)
			b = append(b, s.stage...)
		}
		b = append(b, ')')
	}
	quoted := 0
	for i, v := range vs {
		if v.Reason == "" || v.Reason == judge.EmptyChunkReason || quoted == maxExplainedReasons {
			continue
		}
		if quoted == 0 {
			b = append(b, ". "...)
		} else {
			b = append(b, ' ')
		}
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(i+1), 10)
		if v.Relevant {
			b = append(b, " relevant: "...)
		} else {
			b = append(b, " not relevant: "...)
		}
		b = append(b, strings.TrimRight(v.Reason, ".")...)
		b = append(b, '.')
		quoted++
	}
	// b is this call's own and is not written again: the string can be it
	// rather than a copy of it.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendRanks appends the 1-based ranks of the verdicts that match, comma
// separated.
func appendRanks(b []byte, vs []judge.Verdict, match func(judge.Verdict) bool) []byte {
	first := true
	for i, v := range vs {
		if !match(v) {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(i+1), 10)
		first = false
	}
	return b
}

func hasEmpty(vs []judge.Verdict) bool {
	for _, v := range vs {
		if v.Reason == judge.EmptyChunkReason {
			return true
		}
	}
	return false
}

// exemplarContext carries the scored span's IDs, marked sampled, so that the
// metrics SDK's trace-based exemplar filter attaches them to the histogram.
func exemplarContext(span ptrace.Span) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID(span.TraceID()),
		SpanID:     trace.SpanID(span.SpanID()),
		TraceFlags: trace.FlagsSampled,
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

type stageCount struct {
	stage string
	n     int
}

// stageCounts counts verdicts by the judge that decided them, in order of
// first appearance; chunks decided without a judge (empty) are left out.
func stageCounts(vs []judge.Verdict) []stageCount {
	var out []stageCount
next:
	for _, v := range vs {
		if v.Stage == "" {
			continue
		}
		for i := range out {
			if out[i].stage == v.Stage {
				out[i].n++
				continue next
			}
		}
		out = append(out, stageCount{stage: v.Stage, n: 1})
	}
	return out
}
