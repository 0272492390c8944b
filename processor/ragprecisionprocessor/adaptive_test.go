package ragprecisionprocessor

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
)

// testClock is a clock the test moves.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// retrievals is a batch of n retrieval spans of each data source.
func retrievals(n int, sources ...string) ptrace.Traces {
	b := newBatch("rag-api")
	for _, ds := range sources {
		for i := range n {
			s := b.project(fmt.Sprintf("%s-%d", ds, i), question, "Paris", capitalChunks...)
			s.Attributes().PutStr("app.index", ds)
		}
	}
	return b.td
}

// hajek are the Horvitz-Thompson sums of the scored spans received, per
// data source, from their sample_rate attributes.
type hajek struct {
	scored            int
	weight, weightSum float64
	rates             map[float64]int
}

func receivedSums(h *harness) map[string]*hajek {
	out := map[string]*hajek{}
	for _, td := range h.sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			cp, ok := s.Attributes().Get("rag.contextual_precision")
			if !ok {
				return
			}
			ds, _ := s.Attributes().Get("app.index")
			rate, _ := s.Attributes().Get("rag.contextual_precision.sample_rate")
			w := out[ds.Str()]
			if w == nil {
				w = &hajek{rates: map[float64]int{}}
				out[ds.Str()] = w
			}
			w.scored++
			w.weight += 1 / rate.Double()
			w.weightSum += cp.Double() / rate.Double()
			w.rates[rate.Double()]++
		})
	}
	return out
}

// With adaptive_sampling, each data source is selected at its own rate,
// from the least until the first adjustment, then at what the spend
// allows; each scored span carries the rate it was selected at; the
// Horvitz-Thompson counters sum 1/p and CP/p; the current percentages are a
// gauge; a change of more than 2× is logged.
func TestAdaptiveSampling(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h := newHarnessLogged(t, zap.New(core), func(c *config.Config) {
		c.Attributes.DataSource = "app.index"
		c.AdaptiveSampling = config.AdaptiveSampling{Enabled: true, JudgeRequestsPerSecond: 20,
			MinJudgedPerHour: 100, MinPercentage: 1, MaxPercentage: 100, AdjustInterval: 30 * time.Second}
	})
	clock := newTestClock()
	h.p.now = clock.now
	least := newSamplerProb(0.01).rate

	// Before any adjustment, every series is at min_percentage.
	h.consume(retrievals(1000, "faq", "wiki"))
	h.waitSpans(2000)
	for ds, w := range receivedSums(h) {
		if len(w.rates) != 1 || w.rates[least] == 0 {
			t.Fatalf("%s: rates %v before the first adjustment, want only %v", ds, w.rates, least)
		}
	}
	// An interval of 3,000 candidates of faq and 1,000 of wiki, 3 chunks
	// each: 100/s and 33/s, against 20 requests a second.
	clock.advance(30 * time.Second)
	h.consume(retrievals(2000, "faq"))
	h.waitSpans(4000)
	clock.advance(time.Millisecond)
	h.consume(retrievals(1000, "faq", "wiki"))
	h.waitSpans(6000)

	got := map[string]float64{}
	h.p.adaptive.each(func(k sourceKey, p float64) { got[k.dataSource] = p })
	// 100/s × 3 × pf + 33/s × 3 × pw = 20, with pw - pf = owed/traffic.
	if spend := 300*got["faq"] + 100*got["wiki"]; math.Abs(spend-20) > 0.2 || !(got["wiki"] > got["faq"]) {
		t.Fatalf("rates %v spend %.2f requests/s, want 20 with wiki above faq", got, spend)
	}
	sums := receivedSums(h)
	for _, ds := range []string{"faq", "wiki"} {
		w := sums[ds]
		if w.rates[got[ds]] == 0 {
			t.Errorf("%s: no span scored at the adjusted rate %v: %v", ds, got[ds], w.rates)
		}
		series := map[string]string{"service_name": "rag-api", "data_source": ds}
		if v, _ := floatSum(t, h, "rag_contextual_precision_weight_total", series); math.Abs(v-w.weight) > 1e-6*w.weight {
			t.Errorf("weight_total{%s} = %v, want Σ 1/p = %v", ds, v, w.weight)
		}
		if v, _ := floatSum(t, h, "rag_contextual_precision_weighted_sum_total", series); math.Abs(v-w.weightSum) > 1e-6*w.weightSum {
			t.Errorf("weighted_sum_total{%s} = %v, want Σ CP/p = %v", ds, v, w.weightSum)
		}
	}
	m, err := h.tel.GetMetric("rag_sampling_percentage")
	if err != nil {
		t.Fatal(err)
	}
	points := m.Data.(metricdata.Gauge[float64]).DataPoints
	if len(points) != 2 {
		t.Fatalf("sampling_percentage has %d points, want 2", len(points))
	}
	for _, dp := range points {
		ds, _ := dp.Attributes.Value(labelDataSource)
		if want := 100 * got[ds.AsString()]; dp.Value != want {
			t.Errorf("sampling_percentage{%s} = %v, want %v", ds.AsString(), dp.Value, want)
		}
	}
	changed := logs.FilterMessageSnippet("sampling percentage more than 2x").All()
	if len(changed) != 2 {
		t.Errorf("%d rate change lines, want one per data source", len(changed))
	}
}

// With a fixed rate the Horvitz-Thompson counters are the count and the
// sum of the scores over the rate, and no percentage gauge is reported.
func TestFixedRateWeights(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Attributes.DataSource = "app.index" })
	h.consume(retrievals(20, "faq"))
	h.waitSpans(20)
	w := receivedSums(h)["faq"]
	if w == nil || w.scored != 20 || len(w.rates) != 1 || w.rates[1] != 20 {
		t.Fatalf("scored %+v, want 20 at rate 1", w)
	}
	faq := map[string]string{"data_source": "faq"}
	if v, _ := floatSum(t, h, "rag_contextual_precision_weight_total", faq); v != 20 {
		t.Errorf("weight_total = %v, want 20", v)
	}
	if v, _ := floatSum(t, h, "rag_contextual_precision_weighted_sum_total", faq); math.Abs(v-w.weightSum) > 1e-9 {
		t.Errorf("weighted_sum_total = %v, want %v", v, w.weightSum)
	}
	if _, err := h.tel.GetMetric("rag_sampling_percentage"); err == nil {
		t.Error("sampling_percentage reported with a fixed rate")
	}
}
