package ragprecisionprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
)

// benchTraffic is the load of the whole-collector figures: batches
// of 512 spans, 10% of them retrieval spans of 5 chunks of 500 bytes, the
// rest plain spans with 8 attributes.
func benchTraffic() ptrace.Traces {
	b := newBatch("rag-api")
	words := strings.Fields("the retriever ranks passages about the capital of france paris berlin rome museums rivers history population trains")
	for i := range 512 {
		if i%10 == 0 {
			chunks := make([]string, 5)
			for c := range chunks {
				var sb strings.Builder
				for w := 0; sb.Len() < 500; w++ {
					sb.WriteString(words[(i*7+c*3+w)%len(words)])
					sb.WriteByte(' ')
				}
				chunks[c] = fmt.Sprintf("%d-%d %s", i, c, sb.String())
			}
			b.project(fmt.Sprintf("retrieve %d", i), "What is the capital of France?", "Paris", chunks...)
			continue
		}
		b.httpServer(fmt.Sprintf("GET /items/%d", i))
	}
	return b.td
}

// BenchmarkInlineJudging is the cost of 100% sampling with builtin:lexical,
// judged in place, per span of the batch, next to copying the batch (which
// every iteration does, since judging writes onto the spans).
func BenchmarkInlineJudging(b *testing.B) {
	src := benchTraffic()
	spans := src.SpanCount()
	run := func(b *testing.B, cfg *config.Config) {
		var p *ragProcessor
		if cfg != nil {
			var err error
			p, err = newProcessor(componenttest.NewNopTelemetrySettings(), cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
		}
		b.ReportAllocs()
		for b.Loop() {
			td := ptrace.NewTraces()
			src.CopyTo(td)
			if p != nil {
				_ = p.ConsumeTraces(context.Background(), td)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	}
	b.Run("copy only", func(b *testing.B) { run(b, nil) })
	b.Run("sampling 0%", func(b *testing.B) {
		c := config.Default()
		c.SamplingPercentage = 0
		run(b, c)
	})
	b.Run("sampling 100%", func(b *testing.B) { run(b, config.Default()) })
}
