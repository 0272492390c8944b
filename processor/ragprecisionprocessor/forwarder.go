package ragprecisionprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// A held span the next consumer refuses is offered again with backoff
// between these bounds, until it is accepted or the processor stops.
const (
	forwardFirstBackoff = 100 * time.Millisecond
	forwardMaxBackoff   = 5 * time.Second
)

// forwarder sends judged spans on. One goroutine does it, for every held
// span: whatever finished since its last call goes downstream together, one
// ConsumeTraces per caller context, rather than one call (and one goroutine
// queueing on the next component) per span.
type forwarder struct {
	next consumer.Traces
	// stop is cancelled when Shutdown runs out of time: forwards still
	// blocked downstream are abandoned, and nothing more is sent.
	stop   context.Context
	logger *zap.Logger
	// release gives back the place of a span that went on; lose, of spans
	// that are lost, and counts them.
	release func(*heldSpan)
	lose    func(hs []*heldSpan, reason string)

	mu    sync.Mutex
	queue []*heldSpan
	// stopped is set when the forwarder has stopped for good: later spans
	// are lost (and counted) as they come.
	stopped bool
	wake    chan struct{}
	exited  chan struct{}
}

func newForwarder(next consumer.Traces, stop context.Context, logger *zap.Logger, release func(*heldSpan), lose func([]*heldSpan, string)) *forwarder {
	return &forwarder{next: next, stop: stop, logger: logger, release: release, lose: lose,
		wake: make(chan struct{}, 1), exited: make(chan struct{})}
}

// enqueue hands a finished span to the forwarder.
func (f *forwarder) enqueue(h *heldSpan) {
	f.mu.Lock()
	if f.stopped {
		// A judgement that ended after Shutdown stopped the forwarder (its
		// callback ran late): nothing will forward the span now.
		f.mu.Unlock()
		f.lose([]*heldSpan{h}, dropShutdown)
		return
	}
	f.queue = append(f.queue, h)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run forwards until the processor stops.
func (f *forwarder) run() {
	defer close(f.exited)
	for {
		select {
		case <-f.wake:
		case <-f.stop.Done():
			f.dropAll()
			return
		}
		f.mu.Lock()
		batch := f.queue
		f.queue = nil
		f.mu.Unlock()
		f.send(batch)
	}
}

// send forwards spans grouped by the call they were held from, so that
// client metadata in the caller's context reaches the next component.
func (f *forwarder) send(hs []*heldSpan) {
	for len(hs) > 0 {
		call := hs[0].call
		var group, rest []*heldSpan
		for _, h := range hs {
			if h.call == call {
				group = append(group, h)
			} else {
				rest = append(rest, h)
			}
		}
		f.deliver(call.ctx, group)
		hs = rest
	}
}

// deliver sends one group. A refusal is retried with backoff for as long as
// the processor runs, unless it is permanent: the spans keep their places
// among the held ones meanwhile, so a downstream that refuses everything
// fills max_pending_spans, after which selected spans go on synchronously
// and the refusal reaches the receivers as back-pressure. Only a permanent
// refusal, or one still standing when the processor stops, loses the
// spans; that is logged and counted.
func (f *forwarder) deliver(ctx context.Context, hs []*heldSpan) {
	td := buildTraces(hs)
	backoff := forwardFirstBackoff
	for {
		if f.stop.Err() != nil {
			// Shutdown has stopped forwarding: the next component may be
			// shut down as soon as Shutdown returns, and must not be called
			// after that.
			f.loseAtShutdown(hs)
			return
		}
		err := f.consumeStoppable(ctx, td)
		if err == nil {
			break
		}
		if consumererror.IsPermanent(err) || f.stop.Err() != nil {
			reason := dropRefused
			if f.stop.Err() != nil {
				reason = dropShutdown
			}
			f.lose(hs, reason)
			f.logger.Error("the next consumer refused held spans; they are dropped",
				zap.Int("spans", len(hs)), zap.String("reason", reason), zap.Error(err))
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-f.stop.Done():
			t.Stop()
		}
		backoff = min(2*backoff, forwardMaxBackoff)
	}
	for _, h := range hs {
		f.release(h)
	}
}

// consumeStoppable calls the next consumer with a context that Shutdown
// cancels when it runs out of time.
func (f *forwarder) consumeStoppable(ctx context.Context, td ptrace.Traces) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.stop, cancel)
	defer stop()
	return f.next.ConsumeTraces(ctx, td)
}

// dropAll counts what the forwarder still holds when the processor stops.
func (f *forwarder) dropAll() {
	f.mu.Lock()
	batch := f.queue
	f.queue = nil
	f.stopped = true
	f.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	f.loseAtShutdown(batch)
}

// loseAtShutdown loses held spans that shutdown_timeout left no time to
// forward, and says so.
func (f *forwarder) loseAtShutdown(hs []*heldSpan) {
	f.lose(hs, dropShutdown)
	f.logger.Error("shutdown_timeout passed before held spans could be forwarded; they are dropped", zap.Int("spans", len(hs)))
}

// buildTraces puts held spans back under copies of their resources and
// scopes, one ResourceSpans per origin.
func buildTraces(hs []*heldSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := make(map[*origin]ptrace.SpanSlice, 1)
	for _, h := range hs {
		spans, ok := scopes[h.origin]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			h.origin.resource.CopyTo(rs.Resource())
			rs.SetSchemaUrl(h.origin.resourceSchema)
			ss := rs.ScopeSpans().AppendEmpty()
			h.origin.scope.CopyTo(ss.Scope())
			ss.SetSchemaUrl(h.origin.scopeSchema)
			spans = ss.Spans()
			scopes[h.origin] = spans
		}
		h.span.MoveTo(spans.AppendEmpty())
	}
	return td
}
