package ragprecisionprocessor

import (
	"context"
	"fmt"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

func TestSamplingIsConsistentPerTrace(t *testing.T) {
	const traces = 400
	tids := make([]pcommon.TraceID, traces)
	for i := range tids {
		tids[i] = traceID()
	}
	run := func(pct float64) map[pcommon.TraceID]bool {
		h := newHarness(t, func(c *config.Config) { c.SamplingPercentage = pct })
		selected := map[pcommon.TraceID]bool{}
		b := newBatch("svc")
		for _, tid := range tids {
			for j := range 2 {
				s := b.add(fmt.Sprintf("%s-%d", tid, j), tid)
				s.Attributes().PutStr("rag.reference", "Paris")
				s.Attributes().PutEmptySlice("rag.chunks").AppendEmpty().SetStr("Paris is in France")
			}
		}
		h.consume(b.td)
		h.shutdown(context.Background())
		decisions := map[pcommon.TraceID][]bool{}
		for _, s := range h.spansByName() {
			_, scored := s.Attributes().Get(ragattr.Status)
			decisions[s.TraceID()] = append(decisions[s.TraceID()], scored)
			if scored {
				if v, _ := s.Attributes().Get(ragattr.SampleRate); math.Abs(v.Double()-pct/100) > 1e-9 {
					t.Fatalf("sample_rate %v at %v%%", v.Double(), pct)
				}
			}
		}
		for tid, d := range decisions {
			if len(d) != 2 || d[0] != d[1] {
				t.Fatalf("trace %s: decisions %v differ between its spans", tid, d)
			}
			selected[tid] = d[0]
		}
		return selected
	}
	at25 := run(25)
	at25again := run(25) // another replica
	at50 := run(50)
	n25, n50 := 0, 0
	for tid, in := range at25 {
		if at25again[tid] != in {
			t.Fatalf("trace %s: replicas disagree", tid)
		}
		if in {
			n25++
			if !at50[tid] {
				t.Fatalf("trace %s selected at 25%% but not at 50%%", tid)
			}
		}
	}
	for _, in := range at50 {
		if in {
			n50++
		}
	}
	// Binomial(400, p): 4 standard deviations either side.
	if n25 < 100-35 || n25 > 100+35 || n50 < 200-40 || n50 > 200+40 {
		t.Fatalf("selected %d at 25%%, %d at 50%% of %d traces", n25, n50, traces)
	}
}

// The explicit randomness of OTEP 235 (tracestate ot=rv) decides when
// present.
func TestSamplingHonoursTracestateRandomness(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.SamplingPercentage = 50 })
	b := newBatch("svc")
	low := b.project("low", question, "Paris", "Paris")
	low.TraceState().FromRaw("ot=rv:00000000000001")
	high := b.project("high", question, "Paris", "Paris")
	high.TraceState().FromRaw("ot=rv:ffffffffffffff")
	h.consume(b.td)
	h.shutdown(context.Background())
	if _, ok := h.span("low").Attributes().Get(ragattr.Status); ok {
		t.Fatal("rv near 0 is below a 50% threshold")
	}
	if got := attrStr(h.span("high"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("rv near 1: %q", got)
	}
}
