package ragprecisionprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/passbench"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

const passThroughSpans = 100

// passThroughBatch is a batch of passThroughSpans plain spans with 8
// attributes and a short JSON traceloop.entity.output (which the OpenLLMetry
// reader must look into), every tenth of them a retrieval span when
// candidates is set.
func passThroughBatch(candidates bool) ptrace.Traces {
	td := plainBatch(candidates)
	forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
		if _, ok := s.Attributes().Get("http.request.method"); ok {
			s.Attributes().PutStr("traceloop.entity.output", `{"result": "ok", "items": [1, 2, 3]}`)
		}
	})
	return td
}

// plainBatch is passThroughBatch without the entity outputs: HTTP server
// spans that no dialect watches, what most of a collector's traffic is.
func plainBatch(candidates bool) ptrace.Traces {
	bt := newBatch("checkout")
	for i := range passThroughSpans {
		if candidates && i%10 == 0 {
			bt.project("retrieve", "q", "Paris", "Paris is the capital of France.")
			continue
		}
		bt.httpServer(fmt.Sprintf("GET /items/%d", i))
	}
	return bt.td
}

// passThroughProcessor is a processor at the given sampling percentage,
// not started: the batches it is given must select nothing for the judge.
func passThroughProcessor(tb testing.TB, percentage float64) *ragProcessor {
	cfg := config.Default()
	cfg.SamplingPercentage = percentage
	p, err := newProcessor(componenttest.NewNopTelemetrySettings(), cfg, consumertest.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// BenchmarkPassThrough measures what the processor adds to spans that are
// not retrieval spans: each batch is handed straight to the next consumer
// (noop), walked with each of passbench's baselines (keys, walk, read), and
// given to the processor, interleaved batch by batch. The worst case is
// every span with a JSON traceloop.entity.output to look at; plain spans
// have nothing any dialect watches. Report:
//
//	go test -run '^$' -bench PassThrough -benchmem ./processor/ragprecisionprocessor/
func BenchmarkPassThrough(b *testing.B) {
	walkAll := func(td ptrace.Traces, per func(ptrace.Span) int) func() {
		return func() {
			n := 0
			forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { n += per(s) })
			passbench.Sink += n
		}
	}
	for _, c := range []struct {
		name     string
		td       ptrace.Traces
		sampling float64
	}{
		{"worst case", passThroughBatch(false), 100},
		{"plain spans", plainBatch(false), 100},
		// A tenth of the spans are retrieval spans that sampling leaves
		// out: they are counted, and otherwise pass like the rest.
		{"candidates not selected", passThroughBatch(true), 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := passThroughProcessor(b, c.sampling)
			next := consumertest.NewNop()
			ctx := context.Background()
			b.ReportAllocs()
			passbench.Interleaved(b, c.td.SpanCount(), []string{"noop", "keys", "walk", "read", "ragprecision"},
				func() { _ = next.ConsumeTraces(ctx, c.td) },
				walkAll(c.td, passbench.Keys), walkAll(c.td, passbench.Walk), walkAll(c.td, passbench.Read),
				func() { _ = p.ConsumeTraces(ctx, c.td) })
		})
	}
}

// benchTraffic is the load of docs/BENCHMARKS.md's whole-collector figures: batches
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

// BenchmarkRetrievalDiagnostics sets what the retrieval diagnostics (the
// outcome, nDCG, reciprocal rank and Precision@K attributes, two histograms,
// the outcome and per-rank counters) add against inline judging with
// builtin:lexical, in the same run, interleaved: a batch of retrieval spans
// of 5 chunks of 500 bytes judged in place with a real metrics SDK, against
// the diagnostics' own work on the same spans. Each batch is a fresh copy.
// Report "diagnostics-x-judging" (at most 0.05):
//
//	go test -run '^$' -bench RetrievalDiagnostics ./processor/ragprecisionprocessor/
func BenchmarkRetrievalDiagnostics(b *testing.B) {
	// A batch's counters are added once per series: few data sources, as
	// indexes usually are, and one per span, the worst case.
	for _, c := range []struct {
		name    string
		sources int
	}{{"4 data sources", 4}, {"a data source per span", 0}} {
		b.Run(c.name, func(b *testing.B) { benchmarkRetrievalDiagnostics(b, c.sources) })
	}
}

func benchmarkRetrievalDiagnostics(b *testing.B, sources int) {
	src := ptrace.NewTraces()
	benchTraffic().CopyTo(src)
	// Retrieval spans only: the batch's plain spans cost neither side.
	i := 0
	src.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(s ptrace.Span) bool {
		_, ok := s.Attributes().Get("rag.chunks")
		if ok && sources > 0 {
			s.Attributes().PutStr("gen_ai.data_source.id", fmt.Sprint("index-", i%sources))
			i++
		}
		return !ok
	})
	spans := src.SpanCount()
	tel := componenttest.NewTelemetry()
	defer func() { _ = tel.Shutdown(context.Background()) }()
	p, err := newProcessor(tel.NewTelemetrySettings(), config.Default(), consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()

	// What the judged batch got, for the diagnostics' side to work on: the
	// verdicts, and what scoring a span has at hand when the diagnostics
	// start (the series' label sets).
	judged := ptrace.NewTraces()
	src.CopyTo(judged)
	if err := p.ConsumeTraces(context.Background(), judged); err != nil {
		b.Fatal(err)
	}
	type scored struct {
		r        scoreResult
		verdicts []bool
		key      scoreKey
		sets     *scoreLabelSets
	}
	var all []scored
	forEachSpan(judged, func(_ pcommon.Resource, s ptrace.Span) {
		v, _ := s.Attributes().Get("rag.contextual_precision.verdicts")
		sc := scored{r: scoreResult{refSource: "reference", judgeID: p.judgeID},
			key: scoreKey{series: series{service: "rag-api", dataSource: p.dataSource(s)}, refSource: "reference", judgeID: p.judgeID}}
		for i := range v.Slice().Len() {
			sc.verdicts = append(sc.verdicts, v.Slice().At(i).Bool())
			sc.r.verdicts = append(sc.r.verdicts, judge.Verdict{Relevant: sc.verdicts[i]})
		}
		sc.r.score, _ = scoring.ContextualPrecision(sc.verdicts, 0)
		sc.sets = p.tel.scoreSets(sc.key)
		all = append(all, sc)
	})
	if len(all) != spans {
		b.Fatalf("%d of %d spans scored", len(all), spans)
	}
	batches := make([]ptrace.Traces, 3)
	ctx := context.Background()
	b.ReportAllocs()
	ns := passbench.Interleaved(b, spans, []string{"copy", "judging", "diagnostics"},
		func() { batches[0] = ptrace.NewTraces(); src.CopyTo(batches[0]) },
		func() {
			batches[1] = ptrace.NewTraces()
			src.CopyTo(batches[1])
			_ = p.ConsumeTraces(ctx, batches[1])
		},
		func() {
			batches[2] = ptrace.NewTraces()
			src.CopyTo(batches[2])
			tally := new(scoreTally)
			i := 0
			forEachSpan(batches[2], func(_ pcommon.Resource, s ptrace.Span) {
				sc := &all[i]
				i++
				sc.r.diag, _ = scoring.Diagnose(sc.verdicts, 0)
				attrs := s.Attributes()
				attrs.EnsureCapacity(attrs.Len() + 5)
				putDiagnostics(attrs, &sc.r.diag)
				one := tallyScores{key: sc.key, sets: sc.sets}
				p.tel.recordDiagnostics(&sc.r, &one)
				tally.addScores(&one)
			})
			for k := range tally.scores {
				p.tel.addDiagnostics(&tally.scores[k])
			}
		})
	// What each adds to copying the batch.
	b.ReportMetric((ns[2]-ns[0])/(ns[1]-ns[0]), "diagnostics-x-judging")
}
