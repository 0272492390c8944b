package ragprecisionprocessor

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/spanreader"
	"github.com/ragprecision/ragprecision/judge"
)

// The life of a held span: every phase change is in this file, under
// ragProcessor.mu.
//
//	take                 phaseHeld       moved out of its batch, its place reserved
//	start                phaseJoining    waits for its trace's answer (trace_join)
//	                     phaseJudging    its judgement (and the shadow's) under way
//	joinEnded            phaseJudging    the answer came, or trace_join.wait passed
//	finish, shadowDone   phaseShadowing  judged; waits for the shadow judge
//	                     phaseDone       annotated, handed to the forwarder
//	letGo                phaseDone       its batch was refused downstream: forgotten
//	release, lose                        forwarded, or lost: its place is given back
//	expire, endJoining   ends it at max_wait, or at shutdown, whatever it waits for
const (
	phaseHeld uint8 = iota
	phaseJoining
	phaseJudging
	phaseShadowing
	phaseDone
)

// heldSpan is a selected span taken out of its batch, waiting for its
// verdicts. The span itself is moved, not copied; its resource and scope
// are copied once per batch and shared (origin).
type heldSpan struct {
	span   ptrace.Span
	origin *origin
	// ret is what was read from the span, kept only while it waits for its
	// trace's answer (nil otherwise); chunks and textBytes outlive it.
	ret    *spanreader.Retrieval
	chunks int
	// rerank finds the verdicts of a rerank span's input ranking among
	// those of its judgement, whose first chunks are the output's; nil
	// for a span without one.
	rerank    *rerankInput
	textBytes int64
	// call keeps the caller's context values (client metadata) without its
	// cancellation, which ends when the synchronous call returns.
	call     *callContext
	deadline time.Time
	series   series
	// sampleRate is the probability the span was selected at.
	sampleRate float64
	refSource  string
	// bytes is what the span weighs against max_pending_bytes.
	bytes int64

	phase   uint8
	ticket  *judge.Ticket
	expired bool       // the deadline passed before a ticket existed
	join    *traceJoin // nil unless waiting for the trace's answer

	// shadowWanted: the shadow judge is to judge the span too; shadow is
	// its judgement, once admitted, and shadowRefused the status it was
	// refused with. primary is the primary's outcome while the span waits
	// for the shadow's.
	shadowWanted  bool
	shadow        *shadowJudgement
	shadowRefused string
	primary       *judged
}

// origin is the resource and scope of held spans, copied once for all the
// spans held from one scope of one batch.
type origin struct {
	resource       pcommon.Resource
	resourceSchema string
	scope          pcommon.InstrumentationScope
	scopeSchema    string
}

func newOrigin(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) *origin {
	o := &origin{resource: pcommon.NewResource(), resourceSchema: rs.SchemaUrl(), scope: pcommon.NewInstrumentationScope(), scopeSchema: ss.SchemaUrl()}
	rs.Resource().CopyTo(o.resource)
	ss.Scope().CopyTo(o.scope)
	return o
}

// callContext is the context of the ConsumeTraces call spans were held
// from, shared by them: held spans are forwarded grouped by it.
type callContext struct{ ctx context.Context }

// sizer weighs held spans for max_pending_bytes.
var sizer ptrace.ProtoMarshaler

// heldOverhead is what a held span costs beyond its encoded size and the
// text read from it: the heldSpan, the judgement's bookkeeping, the timer.
const heldOverhead = 1024

// holding is what the processor holds now, for the held-span gauges.
type holding struct {
	spans, bytes int64
	// traceAnswers are the traces whose answers trace_join remembers.
	traceAnswers int64
}

// take moves span out of its batch into h and reserves its place among the
// held spans, so that max_pending_spans and max_pending_bytes are never
// exceeded. When there is no room, the span stays in its batch with status
// overflow.
func (p *ragProcessor) take(h *heldSpan, span ptrace.Span, org *origin) bool {
	h.origin = org
	h.span = ptrace.NewSpan()
	span.MoveTo(h.span)
	h.bytes = int64(sizer.SpanSize(h.span)) + h.textBytes + heldOverhead

	p.mu.Lock()
	status, reason := p.capacityStatusLocked(h.bytes)
	if status == "" {
		p.held++
		p.heldBytes += h.bytes
		h.phase = phaseHeld
		if h.ret != nil { // it waits for its trace's answer
			h.join = p.joinLocked(h)
		}
	}
	p.mu.Unlock()
	if status != "" {
		h.span.MoveTo(span) // back into its batch, which it goes on with
		if h.ticket != nil {
			h.ticket.Abandon()
		}
		p.abandonShadow(h)
		if h.primary != nil {
			// Judged already, and held only for the shadow judge: it goes
			// on with the primary's score.
			h.shadowRefused = status
			p.conclude(span, h, *h.primary)
			return false
		}
		p.markUnscored(span, status, reason)
		return false
	}
	return true
}

// start begins judging h once its batch has gone on: it waits for its
// trace's answer first when it needs it.
func (p *ragProcessor) start(h *heldSpan) {
	p.mu.Lock()
	// The phase is set before the deadline is watched: a deadline already
	// past (the batch took longer than max_wait downstream) fires at once,
	// and expire must find the span in its new phase.
	if h.join != nil {
		h.phase = phaseJoining
	} else {
		h.phase = phaseJudging
	}
	p.deadlines.watch(h)
	if h.join != nil {
		ready := h.join.answer.RootSeen
		p.mu.Unlock()
		p.armJoin(h, ready)
		return
	}
	t, sj, judgedAlready := h.ticket, h.shadow, h.primary != nil
	if judgedAlready {
		h.phase = phaseShadowing
	}
	p.mu.Unlock()
	// A Cancel between the unlock and Commit is kept by the ticket.
	p.commitShadow(h, sj)
	if !judgedAlready {
		t.Commit(func(res judge.Result, err error) { p.finish(h, res, err) })
	}
}

// admitShadow asks the shadow judge to judge req too, if h is one of its
// spans; it never refuses the span, only the shadow's judgement. The
// shadow judges the output ranking only: it is compared on CP, not lift.
func (p *ragProcessor) admitShadow(h *heldSpan, req judge.Request, within time.Duration) {
	if !h.shadowWanted {
		return
	}
	req.Chunks = req.Chunks[:h.chunks]
	h.shadow, h.shadowRefused = p.shadow.admit(req, within)
}

// commitShadow starts the shadow judgement sj, if any.
func (p *ragProcessor) commitShadow(h *heldSpan, sj *shadowJudgement) {
	if sj != nil {
		sj.ticket.Commit(func(res judge.Result, err error) { p.shadowDone(h, res, err) })
	}
}

// abandonShadow gives back what the shadow judge reserved for h.
func (p *ragProcessor) abandonShadow(h *heldSpan) {
	if h.shadow != nil {
		h.shadow.ticket.Abandon()
		h.shadow = nil
	}
}

// joinEnded takes the best answer h's trace has given and judges h with it.
func (p *ragProcessor) joinEnded(h *heldSpan) {
	p.mu.Lock()
	if h.phase != phaseJoining || h.join == nil {
		p.mu.Unlock()
		return
	}
	answer := h.join.answer.Best()
	p.leaveLocked(h)
	h.phase = phaseJudging
	p.mu.Unlock()
	p.judgeJoined(h, answer)
}

// judgeJoined judges h once its trace's answer is known (possibly "").
func (p *ragProcessor) judgeJoined(h *heldSpan, traceAnswer string) {
	src, ref, _ := p.pickReference(*h.ret, traceAnswer, true)
	if src == "" {
		p.finish(h, judge.Result{}, errNoReference)
		return
	}
	h.refSource = src
	chunks, _ := judgedChunks(h.ret)
	req := judge.Request{Query: h.ret.Query, Reference: ref, Chunks: chunks}
	h.ret = nil
	within := h.deadline.Sub(p.now())
	if within <= 0 {
		p.finish(h, judge.Result{}, judge.ErrDeadline)
		return
	}
	p.admitShadow(h, req, within)
	var t *judge.Ticket
	var inline *judged
	if p.engine.Inline() {
		res, err := p.engine.JudgeInline(req)
		inline = &judged{res, err}
	} else {
		var err error
		if t, err = p.engine.Admit(req, within); err != nil {
			p.abandonShadow(h)
			p.finish(h, judge.Result{}, err)
			return
		}
	}
	p.mu.Lock()
	h.ticket = t
	if inline != nil && h.shadow != nil {
		h.primary, h.phase = inline, phaseShadowing
	}
	sj, expired := h.shadow, h.expired
	p.mu.Unlock()
	p.commitShadow(h, sj)
	switch {
	case inline != nil && sj == nil:
		p.finish(h, inline.res, inline.err)
		return
	case t != nil:
		t.Commit(func(res judge.Result, err error) { p.finish(h, res, err) })
	}
	if expired {
		if t != nil {
			t.Cancel(judge.ErrDeadline)
		}
		if sj != nil {
			sj.ticket.Cancel(judge.ErrDeadline)
		}
	}
}

// errNoReference ends a held span whose trace gave no answer.
var errNoReference = errors.New("no reference")

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
	case phaseJudging, phaseShadowing:
		t, sj := h.ticket, h.shadow
		if t == nil && h.primary == nil {
			h.expired = true // judgeJoined cancels the tickets it makes
		}
		p.mu.Unlock()
		if t != nil {
			t.Cancel(judge.ErrDeadline)
		}
		if sj != nil {
			sj.ticket.Cancel(judge.ErrDeadline)
		}
		return
	}
	p.mu.Unlock()
}

// endJoining ends h with status shutdown if it still waits for its trace's
// answer (the judge ends the judgements under way itself).
func (p *ragProcessor) endJoining(h *heldSpan) {
	p.mu.Lock()
	joining := h.phase == phaseJoining
	if joining {
		p.leaveLocked(h)
		h.phase = phaseJudging
	}
	p.mu.Unlock()
	if joining {
		p.finish(h, judge.Result{}, judge.ErrClosed)
	}
}

// finish ends the primary judgement of h: it annotates h with its score or
// status and hands it to the forwarder, unless the shadow judge is still at
// work on it (shadowDone ends it then). It runs once per span.
func (p *ragProcessor) finish(h *heldSpan, res judge.Result, err error) {
	p.mu.Lock()
	if h.phase == phaseDone {
		p.mu.Unlock()
		return
	}
	if sj := h.shadow; sj != nil && !sj.done {
		h.primary, h.phase = &judged{res, err}, phaseShadowing
		p.mu.Unlock()
		if err != nil {
			sj.ticket.Cancel(errPrimaryUnscored) // nothing to compare with
		}
		return
	}
	h.phase = phaseDone
	p.mu.Unlock()
	p.conclude(h.span, h, judged{res, err})
	p.fwd.enqueue(h)
}

// shadowDone ends the shadow judgement of h, and h itself when its primary
// judgement has ended.
func (p *ragProcessor) shadowDone(h *heldSpan, res judge.Result, err error) {
	p.mu.Lock()
	h.shadow.done, h.shadow.result = true, judged{res, err}
	if h.phase != phaseShadowing {
		p.mu.Unlock() // the primary is still at work, or h was let go
		return
	}
	h.phase = phaseDone
	primary := *h.primary
	p.mu.Unlock()
	p.conclude(h.span, h, primary)
	p.fwd.enqueue(h)
}

// conclude writes what the judges made of h onto span: the primary's score
// or status, and beside a score the shadow judge's, if it judged.
func (p *ragProcessor) conclude(span ptrace.Span, h *heldSpan, primary judged) {
	if errors.Is(primary.err, errNoReference) {
		p.markUnscored(span, ragattr.StatusNoReference, "")
		return
	}
	if !p.annotate(span, h, h.refSource, primary.res, primary.err, nil) || !h.shadowWanted {
		return
	}
	switch {
	case h.shadow != nil:
		p.shadow.annotate(span, primary.res.Verdicts[:h.chunks], h.shadow)
	case h.shadowRefused != "":
		p.shadow.count(h.shadowRefused)
	}
}

// letGo forgets a held span whose batch was refused downstream: the sender
// will send it again with the batch.
func (p *ragProcessor) letGo(h *heldSpan) {
	if h.ticket != nil {
		h.ticket.Abandon()
	}
	p.abandonShadow(h)
	p.mu.Lock()
	if h.join != nil {
		p.leaveLocked(h)
	}
	h.phase = phaseDone
	p.releaseLocked(h)
	p.mu.Unlock()
}

// release gives back what take reserved for h, once it has been forwarded
// or lost.
func (p *ragProcessor) release(h *heldSpan) {
	p.mu.Lock()
	p.releaseLocked(h)
	p.mu.Unlock()
}

func (p *ragProcessor) releaseLocked(h *heldSpan) {
	p.held--
	p.heldBytes -= h.bytes
	// The deadline queue keeps h until its deadline: let go of what it
	// points to.
	h.origin, h.ticket, h.call, h.ret = nil, nil, nil, nil
	if p.held == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
}

// lose gives back the places of held spans that are lost, and counts them,
// unless Shutdown has abandoned the forwarder: it counted every span still
// held then. Both happen under p.mu, so that each span is counted once.
func (p *ragProcessor) lose(hs []*heldSpan, reason string) {
	p.mu.Lock()
	count := !p.abandoned.Load()
	for _, h := range hs {
		p.releaseLocked(h)
	}
	p.mu.Unlock()
	if count {
		p.tel.recordDropped(int64(len(hs)), reason)
	}
}

// holding is what the held-span metrics report.
func (p *ragProcessor) holding() holding {
	p.mu.Lock()
	defer p.mu.Unlock()
	return holding{spans: int64(p.held), bytes: p.heldBytes, traceAnswers: int64(p.answers.len())}
}

// capacityStatus is the status, and its reason, a selected span of the
// given weight gets instead of being held, or "" when it can be held.
func (p *ragProcessor) capacityStatus(bytes int64) (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacityStatusLocked(bytes)
}

func (p *ragProcessor) capacityStatusLocked(bytes int64) (string, string) {
	switch {
	case p.closed:
		return ragattr.StatusShutdown, ""
	case p.held >= p.cfg.MaxPendingSpans:
		return ragattr.StatusOverflow, reasonPendingSpans
	case p.heldBytes+bytes > p.cfg.MaxPendingBytes:
		return ragattr.StatusOverflow, reasonPendingBytes
	}
	return "", ""
}
