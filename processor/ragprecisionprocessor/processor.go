package ragprecisionprocessor

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/spanreader"
	"github.com/ragprecision/ragprecision/judge"
)

const (
	keyServiceName = "service.name"
	unknownService = "unknown_service"
	// inlineBudget bounds the time one ConsumeTraces call spends judging
	// inline (builtin:lexical, microseconds a span): spans selected after
	// it are held and judged by the judge's workers instead, so that a huge
	// batch does not hold up its receiver.
	inlineBudget = 50 * time.Millisecond
)

// ragProcessor scores retrieval spans. It is not built on processorhelper's
// synchronous callback: an LLM judge takes seconds, so the spans it judges
// are taken out of their batch and held while everything else goes on at
// once. builtin:lexical judges in microseconds, so its spans are judged in
// place, in the same call.
type ragProcessor struct {
	cfg       *config.Config
	set       component.TelemetrySettings
	next      consumer.Traces
	logger    *zap.Logger
	reader    *spanreader.Reader
	judgeID   string
	judgeOpts []judge.Option
	engine    *judge.Engine // built in Start
	// product serves the product metrics when product_metrics.endpoint is
	// set (Start).
	product *productEndpoint
	// canary re-judges judge.canary's labelled retrievals, and shadow is
	// the shadow judge (Start).
	canary  *canary
	shadow  *shadow
	sampler sampler
	// adaptive chooses each series' sampler (adaptive_sampling); nil
	// when sampler, the fixed sampling_percentage, selects.
	adaptive *rateController
	tel      *telemetry
	health   *healthReporter
	warn     *warnings
	now      func() time.Time

	// stopCtx is cancelled when Shutdown runs out of time: forwards still
	// blocked downstream are abandoned.
	stopCtx context.Context
	stop    context.CancelFunc
	// abandoned is set when Shutdown returns with forwards still blocked
	// downstream; they were counted as dropped then.
	abandoned atomic.Bool

	mu        sync.Mutex
	closed    bool
	held      int
	heldBytes int64
	drained   chan struct{} // closed when held reaches 0 after closed
	// joins are the traces whose answer held spans wait for (trace_join).
	joins map[pcommon.TraceID]*traceJoin
	// answers remembers recent traces' answers (trace_join).
	answers *answerMemory

	fwd       *forwarder
	deadlines *deadlines
}

func newProcessor(set component.TelemetrySettings, cfg *config.Config, next consumer.Traces, opts ...judge.Option) (*ragProcessor, error) {
	err := cfg.Judge.Model.Err()
	if err != nil {
		return nil, err
	}
	judgeID := cfg.Judge.Model.ID()
	health := newHealthReporter(set.Logger)
	p := &ragProcessor{
		cfg:       cfg,
		set:       set,
		next:      next,
		logger:    set.Logger,
		reader:    config.NewSpanReader(cfg),
		judgeID:   judgeID,
		judgeOpts: opts,
		sampler:   newSampler(cfg.SamplingPercentage),
		health:    health,
		warn:      newWarnings(set.Logger, time.Now),
		now:       time.Now,
		joins:     make(map[pcommon.TraceID]*traceJoin),
	}
	// The answer memory is there before the metrics that read it.
	p.answers = newAnswerMemory(cfg.TraceJoin.MaxTraces, cfg.TraceJoin.MaxBytes, cfg.TraceJoin.Wait,
		func(n int64) { p.tel.recordAnswersEvicted(n) })
	if p.tel, err = newTelemetry(set, cfg, gauges{healthy: health.healthy, holding: p.holding, cfg: cfg}); err != nil {
		return nil, err
	}
	if cfg.AdaptiveSampling.Enabled {
		p.adaptive = newRateController(adaptiveSettings(cfg), func() time.Time { return p.now() }, p.logRateChange)
	}
	p.stopCtx, p.stop = context.WithCancel(context.Background())
	p.fwd = newForwarder(next, p.stopCtx, set.Logger, p.release, p.lose)
	p.deadlines = newDeadlines(func() time.Time { return p.now() }, p.expire)
	return p, nil
}

// setClock replaces the processor's clock before it starts; the adaptive
// controller's first interval starts on it.
func (p *ragProcessor) setClock(now func() time.Time) {
	p.now = now
	if p.adaptive != nil {
		p.adaptive = newRateController(adaptiveSettings(p.cfg), now, p.logRateChange)
	}
}

// Start builds the judge: its HTTP client comes from the collector's client
// settings, whose authenticator extensions are only reachable through the
// host.
func (p *ragProcessor) Start(ctx context.Context, host component.Host) error {
	model := p.cfg.Judge.Model
	var hc *http.Client
	if !model.Builtin() {
		var err error
		if hc, err = judgeHTTPClient(ctx, p.cfg.Judge, host, p.set); err != nil {
			return err
		}
	}
	opts := append([]judge.Option{judge.WithObserver(judgeObserver{metrics: p.tel.judge, health: p.health.report})}, p.judgeOpts...)
	engine, err := config.NewJudge(p.cfg.Judge, p.cfg.Cache, hc, opts...)
	if err != nil {
		return err
	}
	p.engine = engine
	if p.cfg.ProductMetrics.Endpoint() != "" {
		ep, err := acquireProductEndpoint(ctx, &p.cfg.ProductMetrics, host, p.set)
		if err != nil {
			return err // Shutdown closes the engine
		}
		p.product = ep
		p.tel.useProductBuilder(ep.builder, ep.sums)
	}
	if p.adaptive != nil {
		if err := p.tel.product.RegisterSamplingPercentageCallback(p.adaptive.observePercentages); err != nil {
			return err
		}
	}
	if p.cfg.ShadowJudge.Enabled() {
		if p.shadow, err = newShadow(ctx, p.cfg, host, p.set, p.tel.ops, p.tel.judgeModel); err != nil {
			return err
		}
	}
	if p.cfg.Judge.Canary.Enabled() {
		m := newCanaryMetrics(p.tel.ops, p.tel.judgeModel, p.tel.judgeVersion)
		if p.canary, err = newCanary(p.cfg, engine, m, p.logger); err != nil {
			return err
		}
		go p.canary.run()
	}
	p.health.start(host)
	go p.fwd.run()
	switch {
	case p.cfg.Judge.Criteria != "" && model.Builtin():
		p.logger.Warn("judge.criteria is set, but builtin:lexical cannot read criteria: they are ignored; use an LLM judge or a cascade to apply them")
	case p.cfg.Judge.Criteria != "" && model.Cascade():
		p.logger.Info("judge.criteria is set: builtin:lexical cannot read criteria, so in this cascade it decides only the chunks it is sure are not relevant, and the LLM, which reads them, decides the rest")
	}
	p.logger.Info("ragprecision processor started",
		zap.String("judge", engine.ID()),
		zap.Float64("sampling_percentage", p.cfg.SamplingPercentage),
		zap.Bool("adaptive_sampling", p.adaptive != nil),
		zap.Bool("trace_join", p.cfg.TraceJoin.Enabled),
		zap.Bool("inline", engine.Inline()))
	return nil
}

func (p *ragProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// consumeState is what one ConsumeTraces call accumulates.
type consumeState struct {
	call       *callContext
	now        time.Time
	inlineEnds time.Time
	held       []*heldSpan
	// readChunks is the chunks of the span judgeOrHold last read, -1 when
	// it read none (adaptive_sampling counts them).
	readChunks int
	emptied    map[int][]int // resource index -> scopes emptied by holding
	// tally gathers the counters of the spans scored in place, added
	// once the batch has been read (scores).
	tally *scoreTally
}

// scores is the batch's tally, made when its first span is scored.
func (st *consumeState) scores() *scoreTally {
	if st.tally == nil {
		st.tally = new(scoreTally)
	}
	return st.tally
}

// ConsumeTraces forwards the batch at once, minus the selected spans it
// holds for an LLM judge. Spans that are not candidates, or not selected,
// are neither changed nor delayed; spans judged inline go on scored.
func (p *ragProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var st consumeState
	// counts is not part of st: judgeOrHold lets st's contents escape, and
	// counts must stay on the stack.
	var counts candidateCounts
	if p.cfg.TraceJoin.Enabled {
		p.observeAnswers(td)
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			var taken []int
			var org *origin
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				dialect, ok := p.reader.Recognise(span)
				if !ok {
					continue
				}
				if service == "" {
					service = serviceName(rs.Resource())
				}
				s := series{service: service, dataSource: p.dataSource(span), variant: p.variant(span, rs.Resource())}
				var e *candidateCount
				var selected bool
				rate := p.sampler.rate
				if p.adaptive == nil {
					selected = p.sampler.selected(span)
					counts.add(s, selected)
				} else {
					e = counts.entry(s)
					if e.sampler == nil {
						// The series' rate is taken once a batch: a
						// lookup under a lock, not one a span.
						e.source = p.adaptive.source(s.service, s.dataSource)
						e.sampler = e.source.sampler.Load()
					}
					rate = e.sampler.rate
					selected = e.sampler.selected(span)
					e.count(selected)
				}
				if !selected {
					continue
				}
				if st.now.IsZero() {
					st.now = p.now()
					st.inlineEnds = st.now.Add(inlineBudget)
				}
				st.readChunks = -1
				h := p.judgeOrHold(&st, span, dialect, s, rate)
				if e != nil && st.readChunks >= 0 {
					e.reads++
					e.chunks += int64(st.readChunks)
				}
				if h == nil {
					continue
				}
				if org == nil {
					org = newOrigin(rs, ss)
				}
				if st.call == nil {
					st.call = &callContext{ctx: context.WithoutCancel(ctx)}
				}
				h.call = st.call
				if !p.take(h, span, org) {
					continue
				}
				st.held = append(st.held, h)
				taken = append(taken, k)
			}
			if len(taken) > 0 {
				removeAt(spans, taken)
				if spans.Len() == 0 {
					if st.emptied == nil {
						st.emptied = map[int][]int{}
					}
					st.emptied[i] = append(st.emptied[i], j)
				}
			}
		}
	}
	p.tel.recordCandidates(ctx, &counts)
	if p.adaptive != nil {
		p.adaptive.observeBatch(&counts)
	}
	if st.tally != nil {
		p.tel.flushScores(st.tally)
	}
	removeEmptied(td, st.emptied)

	if len(st.held) > 0 && td.ResourceSpans().Len() == 0 {
		p.startAll(st.held)
		return nil
	}
	if err := p.next.ConsumeTraces(ctx, td); err != nil {
		// The caller sees the whole batch refused and will send it again,
		// selected spans included: holding them as well would forward them
		// twice.
		for _, h := range st.held {
			p.letGo(h)
		}
		return err
	}
	p.startAll(st.held)
	return nil
}

// judgeOrHold decides what happens to a selected span: it is judged in
// place (inline judge), given a status at once, or returned to be held.
func (p *ragProcessor) judgeOrHold(st *consumeState, span ptrace.Span, dialect spanreader.Dialect, s series, rate float64) *heldSpan {
	// When the processor is full, say so before reading: overload is when
	// parsing chunks that cannot be held would hurt most.
	if status, reason := p.capacityStatus(0); status != "" {
		p.markUnscored(span, status, reason)
		return nil
	}
	ret, status := p.read(span, dialect)
	if status != "" {
		p.markUnscored(span, status, "")
		return nil
	}
	chunks, rerank := judgedChunks(&ret)
	st.readChunks = len(chunks)
	src, ref, needJoin := p.pickReference(ret, "", false)
	if src == "" && !needJoin {
		p.markUnscored(span, ragattr.StatusNoReference, "")
		return nil
	}
	h := &heldSpan{chunks: len(ret.Chunks), rerank: rerank, textBytes: ret.Bytes(), series: s, sampleRate: rate,
		deadline: st.now.Add(p.cfg.MaxWait), shadowWanted: p.shadowSelected(span, rate)}
	if needJoin {
		answer, known := p.knownAnswer(span)
		if !known {
			// The retrieval is kept until the trace's answer comes.
			h.ret = &ret
			return h
		}
		if src, ref, _ = p.pickReference(ret, answer, true); src == "" {
			p.markUnscored(span, ragattr.StatusNoReference, "")
			return nil
		}
	}
	req := judge.Request{Query: ret.Query, Reference: ref, Chunks: chunks}
	p.admitShadow(h, req, p.cfg.MaxWait)
	h.refSource = src
	if p.engine.Inline() && p.now().Before(st.inlineEnds) {
		res, err := p.engine.JudgeInline(req)
		if h.shadow == nil {
			p.annotate(span, h, src, res, err, st.scores())
			return nil
		}
		h.primary = &judged{res, err} // held for the shadow judge
		return h
	}
	ticket, err := p.engine.Admit(req, p.cfg.MaxWait)
	if err != nil {
		p.abandonShadow(h)
		p.annotate(span, h, src, judge.Result{}, err, nil)
		return nil
	}
	if ticket.Decided() {
		// Nothing to ask (the cache, or a cascade's first stage, decided
		// every chunk): scored in place, like an inline judge's span,
		// unless the shadow judge is to judge it too. Commit calls back
		// before it returns.
		if h.shadow != nil {
			ticket.Commit(func(res judge.Result, err error) { h.primary = &judged{res, err} })
			return h
		}
		tally := st.scores()
		ticket.Commit(func(res judge.Result, err error) { p.annotate(span, h, src, res, err, tally) })
		return nil
	}
	h.ticket = ticket
	return h
}

// shadowSelected reports whether the shadow judge judges a selected span
// too: its trace at shadow_judge.percentage of the rate the span was
// selected at, so that the shadow's share of the selected spans is that
// percentage whatever adaptive sampling chose (the shadow's fixed rate,
// sampling_percentage × shadow_judge.percentage, would take every span of
// a series selected below it). The comparison is the same consistent one,
// so the shadow's traces are among the primary's.
func (p *ragProcessor) shadowSelected(span ptrace.Span, rate float64) bool {
	switch {
	case p.shadow == nil:
		return false
	case p.adaptive == nil:
		return p.shadow.sampler.selected(span)
	}
	return newSamplerProb(rate * p.cfg.ShadowJudge.Percentage / 100).selected(span)
}

// read extracts the retrieval of a selected span, or the status it passes
// with.
func (p *ragProcessor) read(span ptrace.Span, dialect spanreader.Dialect) (spanreader.Retrieval, string) {
	ret, err := p.reader.Read(span, dialect)
	switch {
	case err == nil:
		return ret, ""
	case err == spanreader.ErrTooLarge:
		return ret, ragattr.StatusTooLarge
	}
	return ret, ragattr.StatusNoChunks
}

// startAll begins judging the spans held from a batch that has gone on.
func (p *ragProcessor) startAll(held []*heldSpan) {
	for _, h := range held {
		p.start(h)
	}
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

// variant is the variant label of a span: the value of attributes.variant
// on the span, else on its resource; "" when not configured.
func (p *ragProcessor) variant(span ptrace.Span, res pcommon.Resource) string {
	k := p.cfg.Attributes.Variant
	if k == "" {
		return ""
	}
	if v, ok := span.Attributes().Get(k); ok {
		return v.AsString()
	}
	if v, ok := res.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// dataSource is the data_source label of a span.
func (p *ragProcessor) dataSource(span ptrace.Span) string {
	return spanreader.DataSource(span, p.cfg.Attributes.DataSource)
}
