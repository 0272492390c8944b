package ragprecisionprocessor

import (
	"context"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// cumulativeSum is one series of a counter the processor keeps itself and
// the SDK observes at collection: adding to it is an atomic add, where an
// SDK counter's Add resolves and looks up its attribute set every time.
type cumulativeSum struct {
	n   atomic.Int64
	set metric.ObserveOption
}

// Add adds n to the sum.
func (s *cumulativeSum) Add(n int64) { s.n.Add(n) }

// cumulativeSums are the series of one such counter, created at 0 on first
// use and never removed: they are bounded by max_series.
type cumulativeSums struct {
	mu     sync.Mutex
	byset  map[attribute.Distinct]*cumulativeSum
	series []*cumulativeSum
}

func newCumulativeSums() *cumulativeSums {
	return &cumulativeSums{byset: map[attribute.Distinct]*cumulativeSum{}}
}

// sum returns the series of set; processors that share the sums (one
// product_metrics.endpoint) share the series of equal sets.
func (c *cumulativeSums) sum(set attribute.Set) *cumulativeSum {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.byset[set.Equivalent()]; ok {
		return s
	}
	s := &cumulativeSum{set: metric.WithAttributeSet(set)}
	c.byset[set.Equivalent()] = s
	c.series = append(c.series, s)
	return s
}

// observe reports every series, 0 included.
func (c *cumulativeSums) observe(_ context.Context, obs metric.Int64Observer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.series {
		obs.Observe(s.n.Load(), s.set)
	}
	return nil
}

// diagnosticSums are the retrieval diagnostics' counters, kept per meter
// (the collector's telemetry, or one product_metrics.endpoint): scored
// retrievals by outcome, and chunks judged and relevant by rank, which a
// batch of scores adds to many series at once.
type diagnosticSums struct {
	outcomes, judged, relevant *cumulativeSums
}

// newDiagnosticSums makes the sums that b's asynchronous instruments report.
func newDiagnosticSums(b *metadata.TelemetryBuilder) (*diagnosticSums, error) {
	d := &diagnosticSums{outcomes: newCumulativeSums(), judged: newCumulativeSums(), relevant: newCumulativeSums()}
	if err := b.RegisterRetrievalOutcomeTotalCallback(d.outcomes.observe); err != nil {
		return nil, err
	}
	if err := b.RegisterRetrievalChunksJudgedTotalCallback(d.judged.observe); err != nil {
		return nil, err
	}
	if err := b.RegisterRetrievalChunksRelevantTotalCallback(d.relevant.observe); err != nil {
		return nil, err
	}
	return d, nil
}
