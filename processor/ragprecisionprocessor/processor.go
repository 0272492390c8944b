package ragprecisionprocessor

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/spanreader"
	"github.com/ragprecision/ragprecision/scoring"
)

const (
	keyServiceName     = "service.name"
	keyGenAIDataSource = "gen_ai.data_source.id"
	unknownService     = "unknown_service"
	// A held span the next consumer refuses is offered again with backoff
	// between these bounds, until it is accepted or the processor stops.
	forwardFirstBackoff = 100 * time.Millisecond
	forwardMaxBackoff   = 5 * time.Second
)

// sizer weighs held spans for max_pending_bytes.
var sizer ptrace.ProtoMarshaler

// ragProcessor scores retrieval spans. It is not built on processorhelper's
// synchronous callback: judging takes seconds, so selected spans are taken
// out of their batch and held while everything else goes on at once.
type ragProcessor struct {
	cfg     *config.Config
	next    consumer.Traces
	logger  *zap.Logger
	reader  *spanreader.Reader
	judge   judge.Judge
	sampler sampler
	tel     *telemetry
	now     func() time.Time

	// stopCtx ends every judgement when Shutdown runs out of time; spans
	// whose judgement it ends are forwarded with status shutdown.
	stopCtx context.Context
	stop    context.CancelFunc

	mu        sync.Mutex
	closed    bool
	held      int
	heldBytes int64
	// joins are the traces whose answer held spans wait for (trace_join).
	joins map[pcommon.TraceID]*traceJoin
	// joining mirrors len(joins) so that batches skip the answer scan
	// without taking the lock when nothing waits.
	joining atomic.Int64
	wg      sync.WaitGroup
}

// heldSpan is a selected span taken out of its batch, alone in its own
// Traces with a copy of its resource and scope, waiting for its verdicts.
type heldSpan struct {
	td   ptrace.Traces
	span ptrace.Span
	ret  spanreader.Retrieval
	// ctx keeps the caller's context values (client metadata) without its
	// cancellation, which ends when the synchronous call returns.
	ctx        context.Context
	deadline   time.Time
	service    string
	dataSource string
	join       *traceJoin // nil unless waiting for the trace's answer
	joinUntil  time.Time
	// bytes is what the span weighs against max_pending_bytes.
	bytes int64
}

func newProcessor(ctx context.Context, set component.TelemetrySettings, cfg *config.Config, next consumer.Traces, opts ...judge.Option) (*ragProcessor, error) {
	tel, err := newTelemetry(set, cfg.MaxSeries)
	if err != nil {
		return nil, err
	}
	rt, err := judgeTransport(ctx, cfg.Judge)
	if err != nil {
		return nil, err
	}
	j, err := judge.New(cfg.JudgeConfig(), append([]judge.Option{judge.WithObserver(tel), judge.WithTransport(rt)}, opts...)...)
	if err != nil {
		return nil, err
	}
	stopCtx, stop := context.WithCancel(context.Background())
	return &ragProcessor{
		cfg:    cfg,
		next:   next,
		logger: set.Logger,
		reader: spanreader.New(
			spanreader.Keys{Query: cfg.Attributes.Query, Answer: cfg.Attributes.Answer, Reference: cfg.Attributes.Reference, Chunks: cfg.Attributes.Chunks},
			spanreader.Limits{TopK: cfg.TopK, MaxChunks: cfg.MaxChunks, MaxBytes: cfg.MaxRetrievalBytes},
		),
		judge:   j,
		sampler: newSampler(cfg.SamplingPercentage),
		tel:     tel,
		now:     time.Now,
		stopCtx: stopCtx,
		stop:    stop,
		joins:   make(map[pcommon.TraceID]*traceJoin),
	}, nil
}

func (p *ragProcessor) Start(context.Context, component.Host) error {
	p.logger.Info("ragprecision processor started",
		zap.String("judge", p.judge.ID()),
		zap.Float64("sampling_percentage", p.cfg.SamplingPercentage),
		zap.Bool("trace_join", p.cfg.TraceJoin.Enabled))
	return nil
}

func (p *ragProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// ConsumeTraces forwards the batch at once, minus the selected spans it
// holds for judging. Spans that are not candidates, or not selected, are
// neither changed nor delayed.
func (p *ragProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var (
		held                 []*heldSpan
		candidates, selected int64
		holdCtx              context.Context
		now                  time.Time
		emptied              map[int][]int // resource index -> scopes holding emptied
		rss                  = td.ResourceSpans()
	)
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			var taken []int
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				dialect, ok := p.reader.Recognise(span)
				if !ok {
					continue
				}
				candidates++
				if !p.sampler.selected(span) {
					continue
				}
				selected++
				if now.IsZero() {
					now = p.now()
					holdCtx = context.WithoutCancel(ctx)
				}
				h, status := p.hold(span, dialect, rs, ss, now)
				if status != "" {
					markUnscored(span, status)
					p.tel.recordUnscored(status)
					continue
				}
				h.ctx = holdCtx
				held = append(held, h)
				taken = append(taken, k)
			}
			if len(taken) > 0 {
				removeAt(spans, taken)
				if spans.Len() == 0 {
					if emptied == nil {
						emptied = map[int][]int{}
					}
					emptied[i] = append(emptied[i], j)
				}
			}
		}
	}
	if candidates > 0 {
		p.tel.candidates.Add(ctx, candidates)
		if selected > 0 {
			p.tel.selected.Add(ctx, selected)
		}
	}
	removeEmptied(td, emptied)
	if p.joining.Load() > 0 {
		p.observeAnswers(td)
	}

	if len(held) > 0 && td.ResourceSpans().Len() == 0 {
		p.judgeAll(held)
		return nil
	}
	if err := p.next.ConsumeTraces(ctx, td); err != nil {
		// The caller sees the whole batch refused and will send it again,
		// selected spans included: holding them as well would forward them
		// twice.
		for _, h := range held {
			p.release(h)
		}
		return err
	}
	p.judgeAll(held)
	return nil
}

func (p *ragProcessor) judgeAll(held []*heldSpan) {
	for _, h := range held {
		go p.run(h)
	}
}

// hold decides what happens to a selected span: a status to pass with at
// once, or a heldSpan to judge, moved out of the batch with copies of its
// resource and scope. It reserves the span's place among the held ones, so
// that max_pending_spans and max_pending_bytes are never exceeded.
func (p *ragProcessor) hold(span ptrace.Span, dialect spanreader.Dialect, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, now time.Time) (*heldSpan, string) {
	// When the processor is full, say so before reading: overload is when
	// parsing chunks that cannot be held would hurt most.
	if status := p.capacityStatus(0); status != "" {
		return nil, status
	}
	ret, err := p.reader.Read(span, dialect)
	switch {
	case errors.Is(err, spanreader.ErrTooLarge):
		return nil, statusTooLarge
	case err != nil:
		return nil, statusNoChunks
	}
	src, _, needJoin := p.pickReference(ret, "", false)
	if src == "" && !needJoin {
		return nil, statusNoReference
	}
	h := &heldSpan{
		ret:        ret,
		deadline:   now.Add(p.cfg.MaxWait),
		service:    serviceName(rs.Resource()),
		dataSource: p.dataSource(span),
		td:         ptrace.NewTraces(),
	}
	nrs := h.td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(nrs.Resource())
	nrs.SetSchemaUrl(rs.SchemaUrl())
	nss := nrs.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(nss.Scope())
	nss.SetSchemaUrl(ss.SchemaUrl())
	h.span = nss.Spans().AppendEmpty()
	span.MoveTo(h.span)
	h.bytes = int64(sizer.TracesSize(h.td)) + ret.Bytes()

	p.mu.Lock()
	defer p.mu.Unlock()
	if status := p.capacityStatusLocked(h.bytes); status != "" {
		h.span.MoveTo(span) // back into its batch, which it goes on with
		return nil, status
	}
	p.held++
	p.heldBytes += h.bytes
	p.wg.Add(1)
	p.tel.held.Add(context.Background(), 1)
	if needJoin {
		h.join = p.joinLocked(h.span.TraceID())
		h.joinUntil = now.Add(p.cfg.TraceJoin.Wait)
	}
	return h, ""
}

// release gives back what hold reserved for h.
func (p *ragProcessor) release(h *heldSpan) {
	p.mu.Lock()
	p.held--
	p.heldBytes -= h.bytes
	if h.join != nil {
		p.leaveLocked(h.join)
	}
	p.mu.Unlock()
	p.tel.held.Add(context.Background(), -1)
	p.wg.Done()
}

// capacityStatus is the status a selected span of the given weight gets
// instead of being held, or "" when it can be held.
func (p *ragProcessor) capacityStatus(bytes int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacityStatusLocked(bytes)
}

func (p *ragProcessor) capacityStatusLocked(bytes int64) string {
	switch {
	case p.closed:
		return statusShutdown
	case p.held >= p.cfg.MaxPendingSpans, p.heldBytes+bytes > p.cfg.MaxPendingBytes:
		return statusOverflow
	}
	return ""
}

// pickReference returns the first available source of reference_sources.
// Before the trace has been joined, an answer that may still arrive from
// the trace stops the search with needJoin; after it, traceAnswer (possibly
// empty) stands for it.
func (p *ragProcessor) pickReference(ret spanreader.Retrieval, traceAnswer string, joined bool) (src, text string, needJoin bool) {
	for _, s := range p.cfg.ReferenceSources {
		switch s {
		case config.SourceReference:
			if ret.Reference != "" {
				return s, ret.Reference, false
			}
		case config.SourceAnswer:
			if ret.Answer != "" {
				return s, ret.Answer, false
			}
			if p.cfg.TraceJoin.Enabled {
				if !joined {
					return "", "", true
				}
				if traceAnswer != "" {
					return s, traceAnswer, false
				}
			}
		case config.SourceQuery:
			if ret.Query != "" {
				return s, ret.Query, false
			}
		}
	}
	return "", "", false
}

// run judges a held span, annotates it and forwards it.
func (p *ragProcessor) run(h *heldSpan) {
	defer p.release(h)
	ctx, cancel := context.WithDeadline(p.stopCtx, h.deadline)
	defer cancel()

	status, res := p.evaluate(ctx, h)
	if status == statusScored {
		markScored(h.span, res, p.now())
		p.tel.scored.Add(context.Background(), 1)
		p.tel.recordScore(exemplarContext(h.span), res.score.Value, h.service, h.dataSource, res.refSource, res.judgeID)
	} else {
		markUnscored(h.span, status)
		p.tel.recordUnscored(status)
	}
	p.forward(h)
}

func (p *ragProcessor) evaluate(ctx context.Context, h *heldSpan) (string, scoreResult) {
	var traceAnswer string
	if h.join != nil {
		traceAnswer = p.awaitAnswer(ctx, h)
	}
	src, ref, _ := p.pickReference(h.ret, traceAnswer, true)
	if src == "" {
		if p.stopCtx.Err() != nil {
			return statusShutdown, scoreResult{}
		}
		return statusNoReference, scoreResult{}
	}
	res, err := p.judge.Judge(ctx, judge.Request{Query: h.ret.Query, Reference: ref, Chunks: h.ret.Chunks})
	switch {
	case err == nil && len(res.Verdicts) != len(h.ret.Chunks):
		p.logger.Warn("judge returned the wrong number of verdicts", zap.Int("want", len(h.ret.Chunks)), zap.Int("got", len(res.Verdicts)))
		return statusJudgeError, scoreResult{}
	case err == nil:
	case p.stopCtx.Err() != nil:
		return statusShutdown, scoreResult{}
	case errors.Is(err, judge.ErrOverBudget):
		return statusBudget, scoreResult{}
	case ctx.Err() != nil:
		return statusTimeout, scoreResult{}
	default:
		p.logger.Warn("judge failed; span forwarded unscored", zap.String("judge", p.judge.ID()), zap.Error(err))
		return statusJudgeError, scoreResult{}
	}
	verdicts := make([]bool, len(res.Verdicts))
	for i, v := range res.Verdicts {
		verdicts[i] = v.Relevant
	}
	score, _ := scoring.ContextualPrecision(verdicts, 0) // chunks are already cut to top_k
	return statusScored, scoreResult{
		score:      score,
		passed:     scoring.Passed(score.Value, p.cfg.Threshold),
		verdicts:   res.Verdicts,
		refSource:  src,
		judgeID:    p.judge.ID(),
		sampleRate: p.sampler.rate,
	}
}

// forward sends a held span on. A refusal is retried with backoff for as
// long as the processor runs, unless it is permanent: the span keeps its
// place among the held ones meanwhile, so a downstream that refuses
// everything fills max_pending_spans, after which selected spans go on
// synchronously and the refusal reaches the receivers as back-pressure.
// Only a permanent refusal, or one still standing when the processor stops,
// loses the span; that is logged and counted.
func (p *ragProcessor) forward(h *heldSpan) {
	backoff := forwardFirstBackoff
	for {
		err := p.next.ConsumeTraces(h.ctx, h.td)
		if err == nil {
			return
		}
		if consumererror.IsPermanent(err) || p.stopCtx.Err() != nil {
			p.tel.dropped.Add(context.Background(), 1)
			p.logger.Error("the next consumer refused a held span; it is dropped", zap.Error(err))
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-p.stopCtx.Done():
			t.Stop()
		}
		backoff = min(2*backoff, forwardMaxBackoff)
	}
}

// Shutdown stops taking spans in, lets judgements finish until ctx ends or
// shutdown_timeout passes, then ends the rest, which go on with status
// shutdown. Every held span has been forwarded when it returns.
func (p *ragProcessor) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	// The collector calls Shutdown without a deadline; an orchestrator does
	// not wait that long, and a killed process forwards nothing.
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ShutdownTimeout)
	defer cancel()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		p.stop()
		<-done
	}
	p.stop()
	if c, ok := p.judge.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// removeAt removes the elements at the given ascending indices of a pdata
// slice.
func removeAt[T any, S interface{ RemoveIf(func(T) bool) }](s S, indices []int) {
	i, next := 0, 0
	s.RemoveIf(func(T) bool {
		remove := next < len(indices) && indices[next] == i
		if remove {
			next++
		}
		i++
		return remove
	})
}

// removeEmptied drops the scopes that holding spans emptied, and the
// resources left with no scope by that; empty ones that came in stay.
func removeEmptied(td ptrace.Traces, emptied map[int][]int) {
	if len(emptied) == 0 {
		return
	}
	var resources []int
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		scopes, ok := emptied[i]
		if !ok {
			continue
		}
		sss := rss.At(i).ScopeSpans()
		removeAt(sss, scopes)
		if sss.Len() == 0 {
			resources = append(resources, i)
		}
	}
	removeAt(rss, resources)
}

// forEachSpan calls f with every span of td and its resource.
func forEachSpan(td ptrace.Traces, f func(pcommon.Resource, ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				f(rss.At(i).Resource(), spans.At(k))
			}
		}
	}
}

func serviceName(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get(keyServiceName); ok && v.Str() != "" {
		return v.Str()
	}
	return unknownService
}

// dataSource is the histogram's data_source label of a span.
func (p *ragProcessor) dataSource(span ptrace.Span) string {
	attrs := span.Attributes()
	if k := p.cfg.Attributes.DataSource; k != "" {
		if v, ok := attrs.Get(k); ok && v.AsString() != "" {
			return v.AsString()
		}
	}
	if v, ok := attrs.Get(keyGenAIDataSource); ok && v.AsString() != "" {
		return v.AsString()
	}
	return span.Name()
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
