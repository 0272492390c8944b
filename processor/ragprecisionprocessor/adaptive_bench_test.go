package ragprecisionprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/passbench"
)

// BenchmarkChoosingRate is what adaptive_sampling adds per candidate: the
// batch of BenchmarkPassThrough's "candidates not selected" (a tenth of its
// spans retrieval spans), given to a processor whose fixed rate selects
// none and to one whose adaptive rates select none (both bounds at
// 0.0001%), interleaved. Report the difference per candidate
// (adaptive-ns/span − fixed-ns/span) × 10:
//
//	go test -run '^$' -bench ChoosingRate -benchtime 2s ./processor/ragprecisionprocessor/
func BenchmarkChoosingRate(b *testing.B) {
	td := passThroughBatch(true)
	fixed := passThroughProcessor(b, 0)
	cfg := config.Default()
	cfg.AdaptiveSampling = config.AdaptiveSampling{Enabled: true, JudgeRequestsPerSecond: 1,
		MinPercentage: 0.0001, MaxPercentage: 0.0001, AdjustInterval: 30_000_000_000}
	adaptive, err := newProcessor(componenttest.NewNopTelemetrySettings(), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = adaptive.Shutdown(context.Background()) })
	ctx := context.Background()
	b.ReportAllocs()
	ns := passbench.Interleaved(b, td.SpanCount(), []string{"noop", "fixed", "adaptive"},
		func() {},
		func() { _ = fixed.ConsumeTraces(ctx, td) },
		func() { _ = adaptive.ConsumeTraces(ctx, td) })
	candidates := float64(td.SpanCount()) / 10
	b.ReportMetric((ns[2]-ns[1])*float64(td.SpanCount())/candidates, "added-ns/candidate")
}
