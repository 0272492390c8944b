package ragprecisionprocessor

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/spanreader"
)

// traceJoin collects the answer of one trace for the held spans that wait
// for it (trace_join). The root span ends last, so its arrival wakes them
// at once: its answer is used, else the last-ending LLM span's seen so far
// (GenAI agents often leave the answer on the chat span only). Without a
// root, the wait ends with trace_join.wait.
type traceJoin struct {
	id       pcommon.TraceID
	rootDone bool
	root     string
	llm      string
	llmEnd   pcommon.Timestamp
	waiters  []*heldSpan
	timers   map[*heldSpan]*time.Timer
}

// joinLocked registers h as waiting for its trace's answer. p.mu is held.
func (p *ragProcessor) joinLocked(h *heldSpan) *traceJoin {
	id := h.span.TraceID()
	j, ok := p.joins[id]
	if !ok {
		j = &traceJoin{id: id, timers: map[*heldSpan]*time.Timer{}}
		p.joins[id] = j
		p.joining.Add(1)
	}
	j.waiters = append(j.waiters, h)
	return j
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
		p.joining.Add(-1)
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
	wait := h.arrived.Add(p.cfg.TraceJoin.Wait).Sub(p.now())
	p.mu.Lock()
	if h.join != nil && h.phase == phaseJoining {
		h.join.timers[h] = time.AfterFunc(wait, func() { p.joinEnded(h) })
	}
	p.mu.Unlock()
}

// joinEnded takes the best answer the trace has given and judges h with it.
func (p *ragProcessor) joinEnded(h *heldSpan) {
	p.mu.Lock()
	if h.phase != phaseJoining || h.join == nil {
		p.mu.Unlock()
		return
	}
	answer := h.join.root
	if answer == "" {
		answer = h.join.llm
	}
	p.leaveLocked(h)
	h.phase = phaseJudging
	p.mu.Unlock()
	p.judgeJoined(h, answer)
}

// observeAnswers looks through a batch for the answers of traces that held
// spans wait for. Spans are matched under the lock; their answers, which
// may be JSON, are read outside it.
func (p *ragProcessor) observeAnswers(td ptrace.Traces) {
	type match struct {
		join *traceJoin
		span ptrace.Span
	}
	var matches []match
	p.mu.Lock()
	forEachSpan(td, func(_ pcommon.Resource, span ptrace.Span) {
		if join, ok := p.joins[span.TraceID()]; ok {
			matches = append(matches, match{join, span})
		}
	})
	p.mu.Unlock()
	if len(matches) == 0 {
		return
	}

	answers := make([]spanreader.AnswerSpan, len(matches))
	found := make([]bool, len(matches))
	for i, m := range matches {
		answers[i], found[i] = p.reader.TraceAnswer(m.span)
	}
	var woken []*heldSpan
	p.mu.Lock()
	for i, m := range matches {
		join, a := m.join, answers[i]
		switch {
		case m.span.ParentSpanID().IsEmpty():
			if !join.rootDone {
				join.root, join.rootDone = a.Text, true
				for _, h := range join.waiters {
					if h.phase == phaseJoining {
						woken = append(woken, h)
					}
				}
			}
		case found[i] && a.End >= join.llmEnd:
			join.llm, join.llmEnd = a.Text, a.End
		}
	}
	p.mu.Unlock()
	for _, h := range woken {
		p.joinEnded(h)
	}
}
