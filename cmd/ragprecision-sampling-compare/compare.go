package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor"
	"github.com/ragprecision/ragprecision/scoring"
)

// scenario is the traffic of the comparison and the judge's limits.
type scenario struct {
	seed uint64
	// length is the simulated time, step the time between batches.
	length, step time.Duration
	// quietPerSecond is the busy data source's candidates a second outside
	// the burst; burstFactor times that from burstStart for burstLength.
	quietPerSecond, burstFactor float64
	burstStart, burstLength     time.Duration
	// rareShare is the rare data source's traffic, as a share of the busy
	// one's quiet traffic.
	rareShare float64
	chunks    int
	// quietRelevant and burstRelevant are the chance that a chunk is
	// relevant, outside and during the burst: the true precision drops
	// only under load.
	quietRelevant, burstRelevant float64
	// budget is judge.max_requests_per_second, spend the requests a second
	// both runs are set for (the fixed rate at quiet traffic, adaptive
	// sampling's judge_requests_per_second).
	budget, spend    float64
	minJudgedPerHour float64
	minPercentage    float64
}

func defaultScenario() scenario {
	return scenario{seed: 1, length: time.Hour, step: 200 * time.Millisecond,
		quietPerSecond: 20, burstFactor: 10, burstStart: 30 * time.Minute, burstLength: 10 * time.Minute,
		rareShare: 0.01, chunks: 5, quietRelevant: 0.7, burstRelevant: 0.35,
		budget: 10, spend: 8, minJudgedPerHour: 100, minPercentage: 0.01}
}

// busyPerSecond is the busy source's traffic at simulated time at.
func (sc scenario) busyPerSecond(at time.Duration) float64 {
	if at >= sc.burstStart && at < sc.burstStart+sc.burstLength {
		return sc.quietPerSecond * sc.burstFactor
	}
	return sc.quietPerSecond
}

// run is one way of sampling: a fixed percentage, or adaptive sampling.
type run struct {
	name       string
	percentage float64 // fixed; unused when adaptive
	adaptive   bool
}

// row is what one run measured.
type row struct {
	run
	candidates, selected, budgetRefused int
	requestsPerSecond                   float64
	// mean is the hour's mean (Hájek: each scored span weighted by 1/its
	// sample_rate), halfWidth its 95% interval's, truth the mean over every
	// candidate.
	mean, halfWidth, truth float64
	rareJudged             int
}

func (r row) budgetShare() float64 {
	if r.selected == 0 {
		return 0
	}
	return float64(r.budgetRefused) / float64(r.selected)
}

func (r row) covers() bool { return math.Abs(r.mean-r.truth) <= r.halfWidth }

const (
	relevantWord = "relevant"
	busySource   = "products"
	rareSource   = "tenant-new"
)

// compare runs adaptive sampling, then a fixed rate whose expected spend
// over the whole run is what adaptive sampling spent, and, with
// quietSpend, first a fixed rate set to spend sc.spend at quiet traffic
// (the most judge requests of the three: the test leaves it out).
func compare(sc scenario, quietSpend bool) ([]row, error) {
	burst := sc.burstLength.Seconds() / sc.length.Seconds()
	meanCost := sc.quietPerSecond * (1 + (sc.burstFactor-1)*burst + sc.rareShare) * float64(sc.chunks)
	adaptive, err := measure(sc, run{name: "adaptive_sampling", adaptive: true})
	if err != nil {
		return nil, err
	}
	same, err := measure(sc, run{name: "fixed, adaptive's spend", percentage: math.Min(100, 100*adaptive.requestsPerSecond/meanCost)})
	if err != nil {
		return nil, err
	}
	if !quietSpend {
		return []row{same, adaptive}, nil
	}
	quietCost := sc.quietPerSecond * (1 + sc.rareShare) * float64(sc.chunks)
	fixed, err := measure(sc, run{name: "fixed, spend at quiet traffic", percentage: math.Min(100, 100*sc.spend/quietCost)})
	if err != nil {
		return nil, err
	}
	return []row{fixed, same, adaptive}, nil
}

// measure drives the real processor, with an LLM judge (a local Chat
// Completions server that calls a chunk relevant when it says so) and the
// judge's real budget, through sc on a simulated clock.
func measure(sc scenario, r run) (row, error) {
	srv := chattest.NewServer(chattest.KeywordJudge(relevantWord))
	defer srv.Close()
	clock := newSimClock(time.Now())
	f := ragprecisionprocessor.NewFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*config.Config)
	cfg.Judge.Model, _ = config.ParseModel("openai:judge-model")
	cfg.Judge.BaseURL = srv.URL
	cfg.Judge.APIKey = "sk-compare"
	cfg.Judge.MaxRetries = 0
	cfg.Judge.MaxRequestsPerSecond = sc.budget
	cfg.Attributes.DataSource = "app.index"
	cfg.SamplingPercentage = r.percentage
	cfg.AdaptiveSampling.Enabled = r.adaptive
	cfg.AdaptiveSampling.JudgeRequestsPerSecond = sc.spend
	cfg.AdaptiveSampling.MinJudgedPerHour = sc.minJudgedPerHour
	cfg.AdaptiveSampling.MinPercentage = sc.minPercentage
	if err := cfg.Validate(); err != nil {
		return row{}, err
	}
	sink := new(consumertest.TracesSink)
	ctx := context.Background()
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(component.MustNewType("ragprecision")), cfg, sink)
	if err != nil {
		return row{}, err
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		return row{}, err
	}
	defer func() { _ = p.Shutdown(ctx) }()

	rng := rand.New(rand.NewPCG(sc.seed, 0x5a3))
	out := row{run: r}
	var truth float64
	sent := 0
	due := map[string]float64{}
	// The judge answers in real time, and no simulated time may pass while
	// it does (a request would seem to take that long, and a span to wait
	// past max_wait): the clock moves on once the judge has been idle, and
	// no span has come back, for a while of real time. Spans waiting for
	// the budget's refill send nothing meanwhile; they are judged as the
	// clock passes their turn.
	settle := func() {
		calls, back := srv.Calls(), sink.SpanCount()
		for quiet := 0; quiet < 3 && (back < sent || srv.InFlight() > 0); {
			time.Sleep(100 * time.Microsecond)
			c, b := srv.Calls(), sink.SpanCount()
			if c == calls && b == back && srv.InFlight() == 0 {
				quiet++
				continue
			}
			calls, back, quiet = c, b, 0
		}
	}
	for at := time.Duration(0); at < sc.length; at += sc.step {
		clock.advance(sc.step)
		relevant := sc.quietRelevant
		if at >= sc.burstStart && at < sc.burstStart+sc.burstLength {
			relevant = sc.burstRelevant
		}
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "shop")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for _, src := range []struct {
			name      string
			perSecond float64
		}{{busySource, sc.busyPerSecond(at)}, {rareSource, sc.quietPerSecond * sc.rareShare}} {
			due[src.name] += src.perSecond * sc.step.Seconds()
			for ; due[src.name] >= 1; due[src.name]-- {
				truth += addRetrieval(spans, rng, src.name, sent, sc.chunks, relevant)
				sent++
			}
		}
		if err := p.ConsumeTraces(ctx, td); err != nil {
			return row{}, err
		}
		settle()
	}
	// The spans still waiting for the refill are judged as the clock moves
	// on past the last batch.
	for deadline := time.Now().Add(time.Minute); sink.SpanCount() < sent; settle() {
		if time.Now().After(deadline) {
			return row{}, fmt.Errorf("%s: %d of %d spans came back", r.name, sink.SpanCount(), sent)
		}
		clock.advance(sc.step)
	}
	out.candidates = sent
	out.truth = truth / float64(sent)
	out.requestsPerSecond = float64(srv.Calls()) / sc.length.Seconds()
	tallyRow(&out, sink.AllTraces())
	return out, nil
}

// addRetrieval appends a retrieval span of source whose chunks are
// relevant with probability relevant, each text unique so that the verdict
// cache answers none, and returns its true Contextual Precision.
func addRetrieval(spans ptrace.SpanSlice, rng *rand.Rand, source string, n, chunks int, relevant float64) float64 {
	s := spans.AppendEmpty()
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], rng.Uint64())
	binary.BigEndian.PutUint64(id[8:], rng.Uint64())
	s.SetTraceID(pcommon.TraceID(id))
	s.SetSpanID(pcommon.SpanID(id[8:]))
	s.SetName("retrieve")
	a := s.Attributes()
	a.PutStr("app.index", source)
	a.PutStr("rag.query", fmt.Sprintf("question %d", n))
	a.PutStr("rag.reference", fmt.Sprintf("answer %d", n))
	sl := a.PutEmptySlice("rag.chunks")
	verdicts := make([]bool, chunks)
	for i := range verdicts {
		verdicts[i] = rng.Float64() < relevant
		word := "other"
		if verdicts[i] {
			word = relevantWord
		}
		sl.AppendEmpty().SetStr(fmt.Sprintf("chunk %d of retrieval %d: %s", i+1, n, word))
	}
	score, _ := scoring.ContextualPrecision(verdicts, 0)
	return score.Value
}

// tallyRow reads the forwarded spans: statuses, and the Hájek mean of the
// scores with its 95% interval (the variance of a ratio of
// Horvitz-Thompson sums under Poisson sampling, Σ(1−p)/p²·(y−ȳ)² / N̂²).
func tallyRow(out *row, traces []ptrace.Traces) {
	type scored struct{ cp, p float64 }
	var all []scored
	for _, td := range traces {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					a := spans.At(k).Attributes()
					status, ok := a.Get(ragattr.Status)
					if !ok {
						continue
					}
					out.selected++
					if status.Str() == ragattr.StatusBudget {
						out.budgetRefused++
					}
					if status.Str() != ragattr.StatusScored {
						continue
					}
					cp, _ := a.Get(ragattr.Precision)
					rate, _ := a.Get(ragattr.SampleRate)
					all = append(all, scored{cp.Double(), rate.Double()})
					if ds, _ := a.Get("app.index"); ds.Str() == rareSource {
						out.rareJudged++
					}
				}
			}
		}
	}
	var n, sum float64
	for _, s := range all {
		n += 1 / s.p
		sum += s.cp / s.p
	}
	if n == 0 {
		return
	}
	out.mean = sum / n
	var v float64
	for _, s := range all {
		d := s.cp - out.mean
		v += (1 - s.p) / (s.p * s.p) * d * d
	}
	out.halfWidth = 1.96 * math.Sqrt(v) / n
}

// render writes the rows as a Markdown table.
func render(sc scenario, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.0f min: %s at %.0f retrievals/s, ×%.0f for %.0f min from minute %.0f (a chunk relevant %.0f%% of the time, %.0f%% in the burst); %s at %.0f%% of the quiet traffic; %d chunks a span, judge.mode per_chunk, judge.max_requests_per_second %.0f, spend %.0f requests/s, min_judged_per_hour %.0f, seed %d\n\n",
		sc.length.Minutes(), busySource, sc.quietPerSecond, sc.burstFactor, sc.burstLength.Minutes(), sc.burstStart.Minutes(),
		100*sc.quietRelevant, 100*sc.burstRelevant, rareSource, 100*sc.rareShare, sc.chunks, sc.budget, sc.spend, sc.minJudgedPerHour, sc.seed)
	b.WriteString("| run | selected | `budget` share | judge requests/s | hour's mean ± 95% | true mean | error | truth within the interval | rare source judged (minimum) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|:---:|---:|\n")
	for _, r := range rows {
		name := r.name
		if !r.adaptive {
			name = fmt.Sprintf("%s (%.3g%%)", r.name, r.percentage)
		}
		covers := "no"
		if r.covers() {
			covers = "yes"
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f%% | %.2f | %.4f ± %.4f | %.4f | %+.4f | %s | %d (%.0f) |\n",
			name, r.selected, 100*r.budgetShare(), r.requestsPerSecond, r.mean, r.halfWidth, r.truth, r.mean-r.truth, covers, r.rareJudged, sc.minJudgedPerHour*sc.length.Hours())
	}
	return b.String()
}

// simClock is a judge.Clock that moves only when told to.
type simClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*simTimer
}

type simTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newSimClock(start time.Time) *simClock { return &simClock{now: start} }

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) AfterFunc(d time.Duration, f func()) judge.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &simTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return &simStop{c: c, t: t}
}

type simStop struct {
	c *simClock
	t *simTimer
}

func (s *simStop) Stop() bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	was := !s.t.stopped
	s.t.stopped = true
	return was
}

// advance moves the clock and runs the timers that came due, each in its
// own goroutine as time.AfterFunc does.
func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*simTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		go t.f()
	}
}
