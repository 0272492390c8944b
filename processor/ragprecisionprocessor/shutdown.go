package ragprecisionprocessor

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Shutdown has this long beyond shutdown_timeout to see the forwarder
// return once its forwards are cancelled.
const shutdownGrace = 100 * time.Millisecond

// Shutdown stops taking spans in, lets judgements finish while there is
// time, then ends the rest (status shutdown) and forwards everything held.
// It returns within shutdown_timeout (or ctx's deadline, if sooner) plus a
// small constant, whatever the judge and the next consumer do: what could
// not be forwarded by then is counted as dropped and logged.
//
// Of the time it has, the last part (a quarter, at most one second) is kept
// for forwarding after judging stops.
func (p *ragProcessor) Shutdown(ctx context.Context) error {
	start := p.now()
	deadline := start.Add(p.cfg.ShutdownTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	total := deadline.Sub(start)
	judgeUntil := deadline.Add(-min(total/4, time.Second))

	if p.canary != nil {
		p.canary.halt()
	}
	p.mu.Lock()
	p.closed = true
	var drained chan struct{}
	if p.held > 0 {
		drained = make(chan struct{})
		p.drained = drained
	}
	p.mu.Unlock()

	if drained != nil && !p.waitUntil(drained, judgeUntil) {
		p.endJudging()
		p.waitUntil(drained, deadline)
	}
	p.endJudging()
	if p.canary != nil {
		p.canary.wait() // its judgement, if any, ended with the judge
	}
	p.deadlines.stop()

	// Anything still held now is blocked downstream or never reached it:
	// cancel the forwards and stop the forwarder.
	p.stop()
	if p.engine != nil {
		select {
		case <-p.fwd.exited:
		case <-time.After(shutdownGrace):
			p.mu.Lock()
			p.abandoned.Store(true) // under p.mu: see drop
			stuck := p.held
			p.mu.Unlock()
			p.tel.recordDropped(int64(stuck), dropShutdown)
			p.logger.Error("the next consumer did not return within shutdown_timeout; held spans it was given are abandoned",
				zap.Int("spans", stuck))
		}
	}
	p.tel.close()
	if p.product == nil {
		return nil
	}
	// The last scrapes of the product metrics end within shutdownGrace.
	stopCtx, cancel := context.WithDeadline(context.Background(), deadline.Add(shutdownGrace))
	defer cancel()
	return p.product.release(stopCtx)
}

// waitUntil waits for ch until the deadline, and reports whether it closed.
func (p *ragProcessor) waitUntil(ch chan struct{}, deadline time.Time) bool {
	t := time.NewTimer(deadline.Sub(p.now()))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// endJudging ends every judgement still under way: the judge's end each
// with status shutdown, and so do the spans waiting for their trace's
// answer.
func (p *ragProcessor) endJudging() {
	if p.engine != nil {
		_ = p.engine.Close()
	}
	if p.shadow != nil {
		_ = p.shadow.engine.Close()
	}
	p.mu.Lock()
	var waiting []*heldSpan
	for _, j := range p.joins {
		waiting = append(waiting, j.waiters...)
	}
	p.mu.Unlock()
	for _, h := range waiting {
		p.endJoining(h)
	}
}
