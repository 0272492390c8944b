package ragprecisionprocessor

import (
	"context"
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
	rootSeen chan struct{} // closed when the root span arrives
	rootDone bool
	root     string
	llm      string
	llmEnd   pcommon.Timestamp
	waiters  int
}

// joinLocked registers a waiter for the answer of trace id. p.mu is held.
func (p *ragProcessor) joinLocked(id pcommon.TraceID) *traceJoin {
	j, ok := p.joins[id]
	if !ok {
		j = &traceJoin{id: id, rootSeen: make(chan struct{})}
		p.joins[id] = j
		p.joining.Add(1)
	}
	j.waiters++
	return j
}

// awaitAnswer waits for the trace's root answer until trace_join.wait (or
// the span's own deadline) and returns the best answer seen, possibly "".
func (p *ragProcessor) awaitAnswer(ctx context.Context, h *heldSpan) string {
	t := time.NewTimer(time.Until(h.joinUntil))
	select {
	case <-h.join.rootSeen:
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()

	p.mu.Lock()
	defer p.mu.Unlock()
	answer := h.join.root
	if answer == "" {
		answer = h.join.llm
	}
	p.leaveLocked(h.join)
	h.join = nil
	return answer
}

// leaveLocked unregisters a waiter of j. p.mu is held.
func (p *ragProcessor) leaveLocked(j *traceJoin) {
	j.waiters--
	if j.waiters == 0 {
		delete(p.joins, j.id)
		p.joining.Add(-1)
	}
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
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, m := range matches {
		join, a := m.join, answers[i]
		switch {
		case m.span.ParentSpanID().IsEmpty():
			if !join.rootDone {
				join.root, join.rootDone = a.Text, true
				close(join.rootSeen)
			}
		case found[i] && a.End >= join.llmEnd:
			join.llm, join.llmEnd = a.Text, a.End
		}
	}
}
