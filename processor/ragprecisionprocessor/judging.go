package ragprecisionprocessor

import (
	"errors"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

// start begins judging h once its batch has gone on: it waits for its
// trace's answer first when it needs it.
func (p *ragProcessor) start(h *heldSpan) {
	p.mu.Lock()
	// The phase is set before the deadline is watched: a deadline already
	// past (the batch took longer than max_wait downstream) fires at once,
	// and expire must not find the span still phaseHeld and do nothing. A
	// Cancel between here and Commit is kept by the ticket.
	if h.join != nil {
		h.phase = phaseJoining
	} else {
		h.phase = phaseJudging
	}
	p.deadlines.watch(h)
	if h.join != nil {
		ready := h.join.answer.rootDone
		p.mu.Unlock()
		p.armJoin(h, ready)
		return
	}
	t := h.ticket
	p.mu.Unlock()
	t.Commit(func(res judge.Result, err error) { p.finish(h, res, err) })
}

// expire ends h at its deadline (max_wait), whatever it is waiting for.
func (p *ragProcessor) expire(h *heldSpan) {
	p.mu.Lock()
	switch h.phase {
	case phaseJoining:
		p.leaveLocked(h)
		h.phase = phaseJudging
		p.mu.Unlock()
		p.finish(h, judge.Result{}, judge.ErrDeadline)
		return
	case phaseJudging:
		t := h.ticket
		if t == nil {
			h.expired = true // joinEnded cancels the ticket it makes
		}
		p.mu.Unlock()
		if t != nil {
			t.Cancel(judge.ErrDeadline)
		}
		return
	}
	p.mu.Unlock()
}

// judgeJoined judges h once its trace's answer is known (possibly "").
func (p *ragProcessor) judgeJoined(h *heldSpan, traceAnswer string) {
	src, ref, _ := p.pickReference(*h.ret, traceAnswer, true)
	if src == "" {
		p.finish(h, judge.Result{}, errNoReference)
		return
	}
	h.refSource = src
	req := judge.Request{Query: h.ret.Query, Reference: ref, Chunks: h.ret.Chunks}
	h.ret = nil
	if p.engine.Inline() {
		res, err := p.engine.JudgeInline(req)
		p.finish(h, res, err)
		return
	}
	within := h.deadline.Sub(p.now())
	if within <= 0 {
		p.finish(h, judge.Result{}, judge.ErrDeadline)
		return
	}
	t, err := p.engine.Admit(req, within)
	if err != nil {
		p.finish(h, judge.Result{}, err)
		return
	}
	p.mu.Lock()
	h.ticket = t
	expired := h.expired
	p.mu.Unlock()
	t.Commit(func(res judge.Result, err error) { p.finish(h, res, err) })
	if expired {
		t.Cancel(judge.ErrDeadline)
	}
}

// errNoReference ends a held span whose trace gave no answer.
var errNoReference = errors.New("no reference")

// finish annotates a held span with its score or status and hands it to the
// forwarder. It runs once per span.
func (p *ragProcessor) finish(h *heldSpan, res judge.Result, err error) {
	p.mu.Lock()
	if h.phase == phaseDone {
		p.mu.Unlock()
		return
	}
	h.phase = phaseDone
	p.mu.Unlock()
	if errors.Is(err, errNoReference) {
		p.markUnscored(h.span, statusNoReference, "")
	} else {
		p.annotate(h.span, h, h.refSource, res, err, nil)
	}
	p.fwd.enqueue(h)
}

// annotate writes the outcome of a judgement onto span: the score, or the
// status (and reason) it goes on with. A score's counters go into tally
// when there is one (see telemetry.recordScore).
func (p *ragProcessor) annotate(span ptrace.Span, h *heldSpan, refSource string, res judge.Result, err error, tally *scoreTally) {
	status, reason := statusOf(err)
	if status == statusScored && len(res.Verdicts) != h.chunks {
		status, reason = statusJudgeError, string(judge.ReasonBadReply)
	}
	if status != statusScored {
		p.markUnscoredErr(span, status, reason, err)
		return
	}
	verdicts := make([]bool, len(res.Verdicts))
	for i, v := range res.Verdicts {
		verdicts[i] = v.Relevant
	}
	score, _ := scoring.ContextualPrecision(verdicts, 0) // chunks are already cut to top_k
	r := scoreResult{
		score:      score,
		passed:     scoring.Passed(score.Value, p.cfg.Threshold),
		verdicts:   res.Verdicts,
		refSource:  refSource,
		judgeID:    p.judgeID,
		sampleRate: p.sampler.rate,
	}
	markScored(span, r, p.now())
	p.tel.recordScore(exemplarContext(span), r, h.service, h.dataSource, tally)
	p.tel.recordStages(res.Verdicts, tally)
}

// markUnscored gives a selected span that could not be scored its status,
// counts it, and tells the operator (rate-limited) why.
func (p *ragProcessor) markUnscored(span ptrace.Span, status, reason string) {
	p.markUnscoredErr(span, status, reason, nil)
}

func (p *ragProcessor) markUnscoredErr(span ptrace.Span, status, reason string, err error) {
	markUnscored(span, status, reason)
	p.tel.recordUnscored(status, reason)
	p.warn.unscored(status, reason, err)
}

// statusOf maps a judgement's error to the span's status and its reason.
func statusOf(err error) (status, reason string) {
	switch {
	case err == nil:
		return statusScored, ""
	case errors.Is(err, judge.ErrOverBudget):
		return statusBudget, ""
	case errors.Is(err, judge.ErrNoCapacity):
		return statusOverflow, reasonJudgeCapacity
	case errors.Is(err, judge.ErrDeadline):
		return statusTimeout, ""
	case errors.Is(err, judge.ErrClosed):
		return statusShutdown, ""
	}
	if r := judge.ReasonOf(err); r != "" {
		return statusJudgeError, string(r)
	}
	return statusJudgeError, reasonUnknown
}
