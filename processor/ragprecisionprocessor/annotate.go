package ragprecisionprocessor

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

// Span attributes written by the processor (SPEC §5).
const (
	attrPrecision       = "rag.contextual_precision"
	attrPassed          = "rag.contextual_precision.passed"
	attrK               = "rag.contextual_precision.k"
	attrRelevant        = "rag.contextual_precision.relevant"
	attrVerdicts        = "rag.contextual_precision.verdicts"
	attrReferenceSource = "rag.contextual_precision.reference_source"
	attrJudge           = "rag.contextual_precision.judge"
	attrSampleRate      = "rag.contextual_precision.sample_rate"
	attrStatus          = "rag.contextual_precision.status"
	// attrReason says which failure a judge_error was, or which limit an
	// overflow hit, so that an outage never reads as a capacity problem.
	attrReason = "rag.contextual_precision.reason"

	eventEvaluation      = "gen_ai.evaluation.result"
	attrEvalName         = "gen_ai.evaluation.name"
	attrEvalScoreValue   = "gen_ai.evaluation.score.value"
	attrEvalScoreLabel   = "gen_ai.evaluation.score.label"
	attrEvalExplanation  = "gen_ai.evaluation.explanation"
	evaluationName       = "contextual_precision"
	labelPass, labelFail = "pass", "fail"
)

// Values of rag.contextual_precision.status.
const (
	statusScored      = "scored"
	statusNoChunks    = "no_chunks"
	statusNoReference = "no_reference"
	statusTooLarge    = "too_large"
	statusJudgeError  = "judge_error"
	statusTimeout     = "timeout"
	statusBudget      = "budget"
	statusOverflow    = "overflow"
	statusShutdown    = "shutdown"
)

var allUnscoredStatuses = []string{
	statusNoChunks, statusNoReference, statusTooLarge, statusJudgeError,
	statusTimeout, statusBudget, statusOverflow, statusShutdown,
}

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

// markUnscored gives a selected span that could not be scored its status,
// and its reason when it has one, and nothing else.
func markUnscored(span ptrace.Span, status, reason string) {
	span.Attributes().PutStr(attrStatus, status)
	if reason != "" {
		span.Attributes().PutStr(attrReason, reason)
	}
}

// scoreResult is everything written onto a scored span.
type scoreResult struct {
	score      scoring.Score
	passed     bool
	verdicts   []judge.Verdict
	refSource  string
	judgeID    string
	sampleRate float64
}

// markScored writes the score attributes and the gen_ai.evaluation.result
// event onto span.
func markScored(span ptrace.Span, r scoreResult, now time.Time) {
	attrs := span.Attributes()
	// Room for the nine attributes at once, rather than the slice growing
	// (and being copied) a few times on the way.
	attrs.EnsureCapacity(attrs.Len() + 9)
	attrs.PutDouble(attrPrecision, r.score.Value)
	attrs.PutBool(attrPassed, r.passed)
	attrs.PutInt(attrK, int64(r.score.K))
	attrs.PutInt(attrRelevant, int64(r.score.Relevant))
	vs := attrs.PutEmptySlice(attrVerdicts)
	vs.EnsureCapacity(r.score.K)
	for _, v := range r.verdicts[:r.score.K] {
		vs.AppendEmpty().SetBool(v.Relevant)
	}
	attrs.PutStr(attrReferenceSource, r.refSource)
	attrs.PutStr(attrJudge, r.judgeID)
	attrs.PutDouble(attrSampleRate, r.sampleRate)
	attrs.PutStr(attrStatus, statusScored)

	ev := span.Events().AppendEmpty()
	ev.SetName(eventEvaluation)
	ev.SetTimestamp(pcommon.NewTimestampFromTime(now))
	ea := ev.Attributes()
	ea.EnsureCapacity(4)
	ea.PutStr(attrEvalName, evaluationName)
	ea.PutDouble(attrEvalScoreValue, r.score.Value)
	label := labelFail
	if r.passed {
		label = labelPass
	}
	ea.PutStr(attrEvalScoreLabel, label)
	ea.PutStr(attrEvalExplanation, explain(r))
}

// maxExplainedReasons bounds how many judge reasons the explanation quotes.
const maxExplainedReasons = 3

// explain says, in one line, why the span scored what it did: which ranks
// were relevant and the judge's reasons for the first few chunks. Reasons are
// one sentence each and the span already holds the texts they speak of.
func explain(r scoreResult) string {
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
