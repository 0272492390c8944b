package ragprecisionprocessor

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/spanreader"
)

// traceJoin collects the answer of one trace for the held spans that wait
// for it (trace_join). The root span ends last, so its arrival wakes them
// at once: its answer is used, else the last-ending LLM span's seen so far
// (GenAI agents often leave the answer on the chat span only). Without a
// root, the wait ends with trace_join.wait.
type traceJoin struct {
	id pcommon.TraceID
	// answer is what the trace has said so far: the answer memory's entry
	// as it was when the join began, updated as answerMemory's is, but
	// kept whatever the memory forgets.
	answer  traceAnswer
	waiters []*heldSpan
	timers  map[*heldSpan]*time.Timer
}

// joinLocked registers h as waiting for its trace's answer, starting from
// what the trace has said so far. p.mu is held.
func (p *ragProcessor) joinLocked(h *heldSpan) *traceJoin {
	id := h.span.TraceID()
	j, ok := p.joins[id]
	if !ok {
		j = &traceJoin{id: id, timers: map[*heldSpan]*time.Timer{}}
		if a, ok := p.answers.get(id, p.now()); ok {
			j.answer = *a
		}
		p.joins[id] = j
	}
	j.waiters = append(j.waiters, h)
	return j
}

// knownAnswer returns the answer of span's trace when waiting could not
// improve it: the root span has been seen (in this batch or an earlier
// one), or span is the root itself. known is false when the root may still
// come.
func (p *ragProcessor) knownAnswer(span ptrace.Span) (answer string, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.answers.get(span.TraceID(), p.now())
	switch {
	case ok && a.RootSeen:
		return a.Best(), true
	case span.ParentSpanID().IsEmpty():
		// The root span does not wait for itself: what its own output and
		// the trace's LLM spans said is all there will be.
		if ok {
			return a.Best(), true
		}
		return "", true
	}
	return "", false
}

// leaveLocked unregisters h from its trace's join. p.mu is held.
func (p *ragProcessor) leaveLocked(h *heldSpan) {
	j := h.join
	if j == nil {
		return
	}
	h.join = nil
	if t, ok := j.timers[h]; ok {
		t.Stop()
		delete(j.timers, h)
	}
	for i, w := range j.waiters {
		if w == h {
			j.waiters = append(j.waiters[:i], j.waiters[i+1:]...)
			break
		}
	}
	if len(j.waiters) == 0 {
		delete(p.joins, j.id)
	}
}

// armJoin ends h's wait for its trace's answer now, when the root span has
// been seen, or else when trace_join.wait has passed (unless the root
// arrives first).
func (p *ragProcessor) armJoin(h *heldSpan, ready bool) {
	if ready {
		p.joinEnded(h)
		return
	}
	arrived := h.deadline.Add(-p.cfg.MaxWait)
	wait := arrived.Add(p.cfg.TraceJoin.Wait).Sub(p.now())
	p.mu.Lock()
	if h.join != nil && h.phase == phaseJoining {
		h.join.timers[h] = time.AfterFunc(wait, func() { p.joinEnded(h) })
	}
	p.mu.Unlock()
}

// observeAnswers looks through a batch for its traces' answers: the root
// span's output, and the last-ending LLM span's. They are remembered for
// trace_join.wait (answerMemory), and handed to the held spans waiting for
// them; a root span's arrival ends their wait. It runs before the batch's
// own retrieval spans are read, so that those find the answers of their
// batch too.
func (p *ragProcessor) observeAnswers(td ptrace.Traces) {
	type found struct {
		id   pcommon.TraceID
		a    spanreader.AnswerSpan
		root bool
	}
	var seen []found
	forEachSpan(td, func(_ pcommon.Resource, span ptrace.Span) {
		a, ok := p.reader.TraceAnswer(span)
		root := span.ParentSpanID().IsEmpty()
		if ok || root {
			seen = append(seen, found{id: span.TraceID(), a: a, root: root})
		}
	})
	if len(seen) == 0 {
		return
	}
	now := p.now()
	var woken []*heldSpan
	p.mu.Lock()
	for _, f := range seen {
		p.answers.record(f.id, f.a.Text, f.root, f.a.End, now)
		join, ok := p.joins[f.id]
		if !ok {
			continue
		}
		if join.answer.Observe(f.a.Text, f.root, f.a.End) {
			for _, h := range join.waiters {
				if h.phase == phaseJoining {
					woken = append(woken, h)
				}
			}
		}
	}
	p.mu.Unlock()
	for _, h := range woken {
		p.joinEnded(h)
	}
}
