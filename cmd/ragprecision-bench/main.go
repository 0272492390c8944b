// Command ragprecision-bench measures the whole distribution: pipelines
// with and without ragprecision, at saturation, in interleaved rounds, and
// prints spans per second and the collector's CPU seconds per million spans
// with their ratios to the pipeline without ragprecision. `make bench` runs
// it after the microbenchmarks, whose output it summarises when given
// -micro.
//
//	make build
//	go run ./cmd/ragprecision-bench -collector bin/otelcol-ragprecision
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/ragprecision/ragprecision/internal/distbench"
	"github.com/ragprecision/ragprecision/internal/loadgen"
)

type options struct {
	bench     distbench.Options
	pipelines string
	dialects  string
	micro     string
	short     bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	def := distbench.DefaultOptions("bin/otelcol-ragprecision")
	o := options{bench: def}
	fs := flag.NewFlagSet("ragprecision-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	b, t := &o.bench, &o.bench.Traffic
	fs.StringVar(&b.Collector, "collector", def.Collector, "the distribution's `binary` (make build)")
	short := distbench.ShortOptions(def.Collector)
	fs.BoolVar(&o.short, "short", false, fmt.Sprintf("a few seconds per pipeline, as the CI check runs it (sets -rounds %d -warmup %v -measure %v)",
		short.Rounds, short.Warmup, short.Measure))
	fs.IntVar(&b.Rounds, "rounds", def.Rounds, "measurements of each pipeline, interleaved")
	fs.DurationVar(&b.Warmup, "warmup", def.Warmup, "load before each measured window")
	fs.DurationVar(&b.Measure, "measure", def.Measure, "measured window")
	fs.StringVar(&o.pipelines, "pipelines", "a,b,c,d,e", "pipelines to measure; the first is the baseline of the ratios\n"+pipelineHelp())
	fs.IntVar(&b.Senders, "senders", def.Senders, "batches in flight at once")
	fs.IntVar(&t.BatchSize, "batch", t.BatchSize, "spans per export request")
	fs.Float64Var(&t.RetrievalShare, "retrieval", t.RetrievalShare, "share of retrieval spans (0-1)")
	fs.IntVar(&t.Chunks, "chunks", t.Chunks, "chunks per retrieval span")
	fs.IntVar(&t.ChunkBytes, "chunk-bytes", t.ChunkBytes, "bytes per chunk")
	fs.StringVar(&o.dialects, "dialects", "project", "dialect mix of retrieval spans, e.g. project=1,gen_ai=1,openinference=1,openllmetry=1")
	fs.Float64Var(&t.RepeatShare, "repeat", 0, "share of retrieval spans repeating an earlier one (verdict cache hits)")
	fs.StringVar(&b.LoadCompression, "load-compression", def.LoadCompression, "the load's OTLP compression: none or gzip")
	fs.StringVar(&b.ExportCompression, "export-compression", def.ExportCompression, "the collector exporter's compression: gzip (its default) or none")
	fs.DurationVar(&b.JudgeDelay, "judge-delay", def.JudgeDelay, "the LLM judge's answer time")
	fs.StringVar(&b.Dir, "dir", "", "where configs and collector logs go (default: a new temporary directory)")
	fs.StringVar(&o.micro, "micro", "", "`file` of `go test -bench` output to summarise before the distribution's table")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.short {
		s := distbench.ShortOptions(b.Collector)
		b.Rounds, b.Warmup, b.Measure = s.Rounds, s.Warmup, s.Measure
	}
	mix, err := loadgen.ParseMix(o.dialects)
	if err != nil {
		return o, fmt.Errorf("-dialects: %w", err)
	}
	t.Dialects = mix
	if b.Pipelines, err = selectPipelines(o.pipelines); err != nil {
		return o, err
	}
	if b.Rounds < 1 || b.Measure <= 0 || b.Warmup < 0 {
		return o, errors.New("-rounds and -measure must be positive, -warmup not negative")
	}
	return o, t.Validate()
}

func pipelineHelp() string {
	var lines []string
	for _, p := range distbench.DefaultPipelines() {
		lines = append(lines, fmt.Sprintf("  %s: %s", p.Name, p.Title))
	}
	return strings.Join(lines, "\n")
}

func selectPipelines(names string) ([]distbench.Pipeline, error) {
	all := distbench.DefaultPipelines()
	var out []distbench.Pipeline
	for name := range strings.SplitSeq(names, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(p distbench.Pipeline) bool { return p.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("-pipelines: no pipeline %q\n%s", name, pipelineHelp())
		}
		out = append(out, all[i])
	}
	return out, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	if o.micro != "" {
		raw, err := os.ReadFile(o.micro)
		if err != nil {
			return err
		}
		writeMicro(out, parseBenchOutput(string(raw)))
		fmt.Fprintln(out)
	}
	o.bench.Progress = os.Stderr
	res, err := distbench.Run(ctx, o.bench)
	if len(res.Measurements) > 0 {
		res.WriteReport(out)
		fmt.Fprintf(out, "\nConfigs and collector logs: %s\n", res.Options.Dir)
	}
	return err
}
