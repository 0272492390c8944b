package ragprecisionprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/spanreader"
)

// sizer weighs held spans for max_pending_bytes.
var sizer ptrace.ProtoMarshaler

// Phases of a held span, changed under ragProcessor.mu.
const (
	phaseHeld    = iota // taken out of its batch, not started
	phaseJoining        // waiting for its trace's answer
	phaseJudging        // its judgement is under way
	phaseDone           // annotated, waiting to be forwarded
)

// heldSpan is a selected span taken out of its batch, waiting for its
// verdicts. The span itself is moved, not copied; its resource and scope
// are copied once per batch and shared (origin).
type heldSpan struct {
	span   ptrace.Span
	origin *origin
	// ret is what was read from the span, kept only while it waits for its
	// trace's answer (nil otherwise); chunks and textBytes outlive it.
	ret       *spanreader.Retrieval
	chunks    int
	textBytes int64
	// call keeps the caller's context values (client metadata) without its
	// cancellation, which ends when the synchronous call returns.
	call       *callContext
	deadline   time.Time
	service    string
	dataSource string
	refSource  string
	// bytes is what the span weighs against max_pending_bytes.
	bytes int64

	phase   uint8
	ticket  *judge.Ticket
	expired bool       // the deadline passed before a ticket existed
	join    *traceJoin // nil unless waiting for the trace's answer
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
		if h.ticket == nil {
			h.join = p.joinLocked(h)
		}
	}
	p.mu.Unlock()
	if status != "" {
		h.span.MoveTo(span) // back into its batch, which it goes on with
		if h.ticket != nil {
			h.ticket.Abandon()
		}
		p.markUnscored(span, status, reason)
		return false
	}
	return true
}

// heldOverhead is what a held span costs beyond its encoded size and the
// text read from it: the heldSpan, the judgement's bookkeeping, the timer.
const heldOverhead = 1024

// letGo forgets a held span whose batch was refused downstream: the sender
// will send it again with the batch.
func (p *ragProcessor) letGo(h *heldSpan) {
	if h.ticket != nil {
		h.ticket.Abandon()
	}
	p.mu.Lock()
	if h.join != nil {
		p.leaveLocked(h)
	}
	h.phase = phaseDone
	p.mu.Unlock()
	p.release(h)
}

// release gives back what take reserved for h.
func (p *ragProcessor) release(h *heldSpan) {
	p.mu.Lock()
	p.releaseLocked(h)
	p.mu.Unlock()
}

// holding is what the held-span metrics report.
func (p *ragProcessor) holding() holding {
	p.mu.Lock()
	defer p.mu.Unlock()
	return holding{spans: int64(p.held), bytes: p.heldBytes, traceAnswers: int64(p.answers.len())}
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
		return statusShutdown, ""
	case p.held >= p.cfg.MaxPendingSpans:
		return statusOverflow, reasonPendingSpans
	case p.heldBytes+bytes > p.cfg.MaxPendingBytes:
		return statusOverflow, reasonPendingBytes
	}
	return "", ""
}
