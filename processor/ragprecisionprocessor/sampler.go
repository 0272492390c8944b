package ragprecisionprocessor

import (
	"strings"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// sampler selects candidate spans by trace, the way consistent probability
// samplers do (OpenTelemetry's TraceIdRatioBased / OTEP 235, and the
// probabilistic sampler processor's proportional mode): a span is selected
// when its trace's randomness — the low 56 bits of the trace ID, or the
// explicit rv in its tracestate — is at or above a threshold derived from
// the sampling percentage. The decision depends on the trace alone, so all
// retrieval spans of a trace are in or out together, on every replica, and a
// trace selected at 10% is also selected at 20%.
type sampler struct {
	threshold sampling.Threshold
	// rate is the selection probability written to sample_rate.
	rate float64
}

func newSampler(percentage float64) sampler { return newSamplerProb(percentage / 100) }

// newSamplerProb is the sampler of a selection probability p in [0, 1].
func newSamplerProb(p float64) sampler {
	if p < sampling.MinSamplingProbability {
		return sampler{threshold: sampling.NeverSampleThreshold}
	}
	th, err := sampling.ProbabilityToThreshold(p)
	if err != nil {
		// Out of range can only mean p > 1, which Validate rules out.
		th = sampling.AlwaysSampleThreshold
	}
	return sampler{threshold: th, rate: th.Probability()}
}

func (s sampler) selected(span ptrace.Span) bool {
	switch s.threshold {
	case sampling.AlwaysSampleThreshold:
		return true
	case sampling.NeverSampleThreshold:
		return false
	}
	rnd := sampling.TraceIDToRandomness(span.TraceID())
	// Only OpenTelemetry's own entry (ot=) can carry rv; parsing a
	// tracestate of other vendors' entries alone allocates for nothing.
	if raw := span.TraceState().AsRaw(); strings.Contains(raw, "ot=") {
		if ts, err := sampling.NewW3CTraceState(raw); err == nil {
			if r, ok := ts.OTelValue().RValueRandomness(); ok {
				rnd = r
			}
		}
	}
	return s.threshold.ShouldSample(rnd)
}
