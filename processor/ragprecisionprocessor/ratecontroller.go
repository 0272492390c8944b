package ragprecisionprocessor

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Adaptive sampling (adaptive_sampling, docs/OPERATING.md): a controller
// that gives each (service_name, data_source) its own selection
// probability for a judge spend, recomputed every adjust interval from the
// candidates and the chunks per span it saw.
const (
	// rateSmoothing is the weight of the last interval in a falling
	// traffic estimate: rising traffic is taken at once, so that a burst
	// cannot outrun the budget, and falling traffic slowly, so that the
	// quiet after one burst does not swing the rates up.
	rateSmoothing = 0.5
	// Within an interval the controller looks at the traffic since it last
	// looked, once it spans surgeCheck and surgeCandidates candidates, for
	// what would spend more than surgeFactor× the spend at the current
	// rates, and then adjusts at once. The bucket holds one second's
	// budget, so a 10× burst must be met within a few tenths of a second;
	// thirty candidates of a series make a false alarm at steady traffic
	// rare (a count of twice the 15 expected).
	surgeCheck      = 50 * time.Millisecond
	surgeCandidates = 30
	surgeFactor     = 2
	// rateChangeLogged is the change of a series' rate that is logged.
	rateChangeLogged = 2
	// budgetRefusalTarget is the share of selected spans the controller
	// lets the judge's budget refuse: spans are selected at random, so a
	// spend under the budget still finds its bucket short now and then,
	// for longer than a span may wait for its refill, and the spend is held
	// below what keeps that share (budgetSafeSpend). Half the 1%
	// docs/OPERATING.md promises, for the model's approximations.
	budgetRefusalTarget = 0.005
)

// sourceKey is what adaptive sampling gives a rate to.
type sourceKey struct{ service, dataSource string }

// rateSettings are the controller's options, taken from adaptive_sampling
// and the judge's.
type rateSettings struct {
	// spend is the judge requests per second the rates are chosen for.
	spend float64
	// budget is judge.max_requests_per_second, 0 when there is none (no
	// limit, or builtin:lexical): the spend is held to what it absorbs.
	budget float64
	// budgetWait is how long a span can count on waiting for the budget's
	// refill before it is refused.
	budgetWait time.Duration
	// minPerSecond is each series' owed judged spans per second.
	minPerSecond float64
	// minProb and maxProb bound each series' probability.
	minProb, maxProb float64
	interval         time.Duration
	maxSeries        int
	// perChunk says a span costs one request per chunk (judge.mode
	// per_chunk); otherwise one.
	perChunk bool
	// assumedChunks is what a span is assumed to hold before any span has
	// been read: the most that can be judged, so that the first rates err
	// on the cheap side.
	assumedChunks float64
}

// rateController chooses the probabilities. Its clock is injected, so
// that tests run hours of traffic in milliseconds.
type rateController struct {
	set rateSettings
	now func() time.Time
	// changed is told of a rate that moved by more than rateChangeLogged×.
	changed func(k sourceKey, from, to float64)

	mu sync.Mutex
	// spend is what the last allocation split: the configured spend, or
	// less where the budget absorbs less (spendLocked).
	spend         float64
	bySource      map[sourceKey]*sourceRate
	sources       []*sourceRate
	other         *sourceRate
	intervalStart time.Time
	lastCheck     time.Time
}

// sourceRate is one series' state. sampler is read without the lock, once
// per batch; the counts are the current interval's.
type sourceRate struct {
	key     sourceKey
	sampler atomic.Pointer[sampler]

	candidates, reads, chunks int64
	// recent is the candidates since the last surge check.
	recent int64
	// rate is the candidates per second the spend is counted at, rising at
	// once and falling slowly; mean the candidates per second smoothed
	// alike both ways, which the owed minimum is divided by: rate, led by
	// the busiest intervals, would short a sparse series of its minimum.
	// chunksPerSpan is the smoothed chunks of a read span, 0 until one is
	// read.
	rate, mean, chunksPerSpan float64
	seen                      bool
}

func newRateController(set rateSettings, now func() time.Time, changed func(sourceKey, float64, float64)) *rateController {
	t := now()
	c := &rateController{set: set, now: now, changed: changed, spend: set.spend, bySource: map[sourceKey]*sourceRate{},
		intervalStart: t, lastCheck: t}
	return c
}

// source returns the state of a series, new ones starting at the least
// probability until the next adjustment; beyond max_series they share
// "other".
func (c *rateController) source(service, dataSource string) *sourceRate {
	k := sourceKey{service, dataSource}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.bySource[k]; ok {
		return s
	}
	if len(c.bySource) >= c.set.maxSeries {
		if c.other == nil {
			c.other = c.newSourceLocked(sourceKey{otherValue, otherValue})
		}
		return c.other
	}
	s := c.newSourceLocked(k)
	c.bySource[k] = s
	return s
}

func (c *rateController) newSourceLocked(k sourceKey) *sourceRate {
	s := &sourceRate{key: k}
	smp := newSamplerProb(c.set.minProb)
	s.sampler.Store(&smp)
	c.sources = append(c.sources, s)
	return s
}

// observe adds a batch's counts of one series: its candidates, and the
// selected spans read and their chunks.
func (c *rateController) observe(s *sourceRate, candidates, reads, chunks int64) {
	c.mu.Lock()
	s.candidates += candidates
	s.recent += candidates
	s.reads += reads
	s.chunks += chunks
	c.mu.Unlock()
}

// tick adjusts the rates when an interval has passed, or at once when the
// traffic since the last check would overspend at the current rates by
// surgeFactor: then the series' traffic estimates are raised to it, and
// the interval goes on. Called after each batch.
func (c *rateController) tick() {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.intervalStart) >= c.set.interval {
		c.adjustLocked(now)
		return
	}
	window := now.Sub(c.lastCheck)
	if window < surgeCheck {
		return
	}
	var recent int64
	for _, s := range c.sources {
		recent += s.recent
	}
	if recent < surgeCandidates {
		return
	}
	// A series' own count in the window says how busy it is only when it
	// is large: one candidate of a sparse series is no surge.
	secs := window.Seconds()
	seen := func(s *sourceRate) float64 {
		if s.recent < surgeCandidates {
			return s.rate
		}
		return math.Max(s.rate, float64(s.recent)/secs)
	}
	projected := 0.0
	for _, s := range c.sources {
		projected += seen(s) * s.sampler.Load().rate * c.requestsPerSpanLocked(s)
	}
	if projected > surgeFactor*c.spend {
		for _, s := range c.sources {
			s.rate = seen(s)
		}
		c.allocateLocked()
	}
	for _, s := range c.sources {
		s.recent = 0
	}
	c.lastCheck = now
}

// adjustLocked updates each series' traffic from the interval and
// recomputes the rates.
func (c *rateController) adjustLocked(now time.Time) {
	secs := now.Sub(c.intervalStart).Seconds()
	for _, s := range c.sources {
		obs := float64(s.candidates) / secs
		if !s.seen {
			s.rate, s.mean, s.seen = obs, obs, true
		}
		s.mean += rateSmoothing * (obs - s.mean)
		if obs > s.rate {
			s.rate = obs
		} else {
			s.rate += rateSmoothing * (obs - s.rate)
		}
		if s.reads > 0 {
			cps := float64(s.chunks) / float64(s.reads)
			if s.chunksPerSpan == 0 {
				s.chunksPerSpan = cps
			} else {
				s.chunksPerSpan += rateSmoothing * (cps - s.chunksPerSpan)
			}
		}
		s.candidates, s.recent, s.reads, s.chunks = 0, 0, 0, 0
	}
	c.intervalStart, c.lastCheck = now, now
	c.allocateLocked()
}

// requestsPerSpanLocked is what judging one of s's spans is expected to
// ask of the judge: its chunks in per_chunk mode (those seen, else the
// other series' mean, else assumedChunks), else one request.
func (c *rateController) requestsPerSpanLocked(s *sourceRate) float64 {
	if !c.set.perChunk {
		return 1
	}
	if s.chunksPerSpan > 0 {
		return s.chunksPerSpan
	}
	sum, n := 0.0, 0
	for _, o := range c.sources {
		if o.chunksPerSpan > 0 {
			sum += o.chunksPerSpan
			n++
		}
	}
	if n > 0 {
		return sum / float64(n)
	}
	return c.set.assumedChunks
}

// allocateLocked splits the spend: each series first gets its owed
// minimum (or all its traffic, if less), scaled down together when the
// spend cannot pay for them all; the rest goes to every series in
// proportion to its traffic, as one probability f added to all; each
// probability is then held within [minProb, maxProb].
func (c *rateController) allocateLocked() {
	n := len(c.sources)
	traffic, cost, owed := make([]float64, n), make([]float64, n), make([]float64, n)
	owedSpend := 0.0
	for i, s := range c.sources {
		traffic[i], cost[i] = s.rate, c.requestsPerSpanLocked(s)
		// owed is the probability that pays the minimum.
		if s.mean > 0 {
			owed[i] = math.Min(s.mean, c.set.minPerSecond) / s.mean
		}
		owedSpend += traffic[i] * cost[i] * owed[i]
	}
	spend := c.spendLocked(traffic, cost)
	c.spend = spend
	if owedSpend >= spend && owedSpend > 0 {
		k := spend / owedSpend
		for i := range owed {
			owed[i] *= k
		}
		c.setRatesLocked(owed, 0)
		return
	}
	spendAt := func(f float64) float64 {
		total := 0.0
		for i := range traffic {
			total += traffic[i] * cost[i] * math.Min(c.set.maxProb, owed[i]+f)
		}
		return total
	}
	f := 1.0
	if spendAt(1) > spend {
		lo, hi := 0.0, 1.0
		for range 50 {
			mid := (lo + hi) / 2
			if spendAt(mid) > spend {
				hi = mid
			} else {
				lo = mid
			}
		}
		f = lo
	}
	c.setRatesLocked(owed, f)
}

// spendLocked is the spend to split: the configured one, held to what the
// budget absorbs of random arrivals of spans of the series' costs. Costs
// still assumed (no span read yet) are left out: they are the most a span
// can cost, and would hold the rates so low that no span is ever read.
func (c *rateController) spendLocked(traffic, cost []float64) float64 {
	if c.set.budget <= 0 {
		return c.set.spend
	}
	// Arrivals of spans costing c_i: requests arrive with a variance of
	// Σλc² a second, that is the spend times the cost-weighted mean cost.
	work, square := 0.0, 0.0
	for i, s := range c.sources {
		if c.set.perChunk && s.chunksPerSpan == 0 {
			continue
		}
		work += traffic[i] * cost[i]
		square += traffic[i] * cost[i] * cost[i]
	}
	if work == 0 {
		return c.set.spend
	}
	return math.Min(c.set.spend, budgetSafeSpend(c.set.budget, c.set.budgetWait, square/work, budgetRefusalTarget))
}

// budgetSafeSpend is the most requests a second, arriving at random in
// spans of perSpan requests, of which a token bucket refilled at budget a
// second, holding one second's worth and letting a span wait up to wait for
// its refill (judge/budget.go), refuses at most share. Bucket and wait hold
// K = (bucket + budget×wait)/perSpan spans (at least one: a larger span is
// admitted from a full bucket, in debt), spans arrive at ρ times the
// refill, and it refuses a span as a queue of K places refuses one,
// (1−ρ)ρ^K/(1−ρ^(K+1)).
// That takes the refill as random too (M/M/1/K), and so errs on the cheap
// side: at a budget of 10, 5 requests a span and the defaults' wait of 5 s
// it allows 7.1 requests a second at a 0.5% share; with no wait, 0.74, of
// which random arrivals see 0.3% refused.
func budgetSafeSpend(budget float64, wait time.Duration, perSpan, share float64) float64 {
	k := math.Max(1, (math.Max(1, budget)+budget*wait.Seconds())/perSpan)
	refused := func(rho float64) float64 {
		return (1 - rho) * math.Pow(rho, k) / (1 - math.Pow(rho, k+1))
	}
	lo, hi := 0.0, 1.0
	for range 50 {
		mid := (lo + hi) / 2
		if refused(mid) > share {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo * budget
}

// setRatesLocked sets each series' probability, its owed one + f within
// the bounds, and reports large changes.
func (c *rateController) setRatesLocked(owed []float64, f float64) {
	for i, s := range c.sources {
		p := math.Max(c.set.minProb, math.Min(c.set.maxProb, owed[i]+f))
		old := s.sampler.Load()
		smp := newSamplerProb(p)
		if smp.rate == old.rate {
			continue
		}
		s.sampler.Store(&smp)
		if c.changed != nil && (smp.rate > rateChangeLogged*old.rate || old.rate > rateChangeLogged*smp.rate) {
			c.changed(s.key, old.rate, smp.rate)
		}
	}
}

// each calls f with every series and its current probability.
func (c *rateController) each(f func(k sourceKey, p float64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sources {
		f(s.key, s.sampler.Load().rate)
	}
}
