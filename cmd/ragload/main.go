// Command ragload sends RAG-shaped trace traffic to an OTLP/gRPC receiver
// as fast as it is accepted, and reports the spans per second achieved and,
// given the collector's process, the collector's CPU seconds per million
// spans and its memory over the measured window.
//
//	bin/otelcol-ragprecision --config my.yaml &
//	go run ./cmd/ragload -endpoint localhost:4317 -pidof otelcol-ragprecision -duration 30s
//
// Each of -senders senders keeps one batch in flight (the next is sent when
// the last was accepted). Every span is a trace of its own, with random low
// 56 bits in its trace ID (which trace-ID sampling decides on), and every
// retrieval span has a query and chunks no other span has, unless -repeat
// says otherwise, so that the verdict cache answers only what it should.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ragprecision/ragprecision/internal/loadgen"
	"github.com/ragprecision/ragprecision/internal/procstat"
)

type options struct {
	load     loadgen.Options
	dialects string
	warmup   time.Duration
	duration time.Duration
	pid      int
	pidof    string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{load: loadgen.Options{Traffic: loadgen.DefaultTraffic()}}
	fs := flag.NewFlagSet("ragload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t := &o.load.Traffic
	fs.StringVar(&o.load.Endpoint, "endpoint", "localhost:4317", "OTLP/gRPC receiver `host:port`")
	fs.IntVar(&o.load.Senders, "senders", 4, "batches in flight at once, each on its own connection")
	fs.IntVar(&t.BatchSize, "batch", t.BatchSize, "spans per export request")
	fs.Float64Var(&t.RetrievalShare, "retrieval", t.RetrievalShare, "share of spans that are retrieval spans (0-1)")
	fs.IntVar(&t.Chunks, "chunks", t.Chunks, "chunks per retrieval span")
	fs.IntVar(&t.ChunkBytes, "chunk-bytes", t.ChunkBytes, "bytes of text per chunk")
	fs.StringVar(&o.dialects, "dialects", "project", "dialect mix of retrieval spans, e.g. project=1,gen_ai=1,openinference=1,openllmetry=1\n"+
		"(every retrieval span carries its reference in "+loadgen.ReferenceKey+"; for the dialects other than project,\n"+
		"configure the processor with attributes: {reference: "+loadgen.ReferenceKey+"})")
	fs.Float64Var(&t.RepeatShare, "repeat", 0, "share of retrieval spans that repeat an earlier one's texts (verdict cache hits)")
	fs.StringVar(&o.load.Compression, "compression", "none", "none or gzip")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "load sent before the measured window")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "measured window (ignored with -spans)")
	fs.Int64Var(&o.load.Spans, "spans", 0, "stop after this many spans in all, warm-up included (whole batches); 0: after -warmup + -duration")
	fs.IntVar(&o.pid, "pid", 0, "the collector's process ID: report its CPU per span and memory")
	fs.StringVar(&o.pidof, "pidof", "", "find the collector's process by `name` (e.g. otelcol-ragprecision) instead of -pid")
	fs.Uint64Var(&o.load.Seed, "seed", 1, "seed of texts and trace IDs")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	mix, err := loadgen.ParseMix(o.dialects)
	if err != nil {
		return o, fmt.Errorf("-dialects: %w", err)
	}
	t.Dialects = mix
	if o.pid != 0 && o.pidof != "" {
		return o, errors.New("give -pid or -pidof, not both")
	}
	if o.warmup < 0 || (o.load.Spans == 0 && o.duration <= 0) {
		return o, errors.New("-warmup must not be negative, and -duration must be positive")
	}
	return o, t.Validate()
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragload:", err)
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragload:", err)
		os.Exit(1)
	}
}

func run(o options, out io.Writer) error {
	pid := o.pid
	if o.pidof != "" {
		var err error
		if pid, err = procstat.FindByName(o.pidof); err != nil {
			return err
		}
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupted)

	fmt.Fprintf(out, "ragload: %d senders to %s, %s\n", o.load.Senders, o.load.Endpoint, o.load.Traffic)
	l, err := loadgen.Start(o.load)
	if err != nil {
		return err
	}
	defer l.Stop()

	// wait waits for d, or for the load to end (-spans reached, or failed),
	// or for Ctrl-C; it reports whether the whole of d passed.
	wait := func(d time.Duration) bool {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			return true
		case <-l.Done():
		case <-interrupted:
		}
		return false
	}
	if o.warmup > 0 && !wait(o.warmup) {
		_, err := l.Stop()
		if err != nil {
			return err
		}
		return errors.New("the load ended during the warm-up: raise -spans, or lower -warmup")
	}
	start, err := sample(l, pid)
	if err != nil {
		return err
	}
	if o.load.Spans > 0 {
		wait(365 * 24 * time.Hour)
	} else {
		wait(o.duration)
	}
	end, err := sample(l, pid)
	if err != nil {
		return err
	}
	if _, err := l.Stop(); err != nil {
		return err
	}
	report(out, start, end, pid)
	return nil
}

// snapshot is what the load and the processes had used at one moment.
type snapshot struct {
	load      loadgen.Stats
	collector procstat.Sample
	self      procstat.Sample
}

func sample(l *loadgen.Load, pid int) (snapshot, error) {
	var s snapshot
	var err error
	if pid != 0 {
		if s.collector, err = procstat.Read(pid); err != nil {
			return s, fmt.Errorf("reading the collector's process %d: %w", pid, err)
		}
	}
	s.self, _ = procstat.Self() // only informative; absent off Linux
	s.load = l.Stats()
	return s, nil
}

func report(out io.Writer, start, end snapshot, pid int) {
	window := end.load.At.Sub(start.load.At)
	spans := end.load.Spans - start.load.Spans
	perSecond := float64(spans) / window.Seconds()
	fmt.Fprintf(out, "measured %.1f s: %d spans accepted (%d retrieval spans), %.1fk spans/s; %d export attempts refused and sent again\n",
		window.Seconds(), spans, end.load.RetrievalSpans-start.load.RetrievalSpans, perSecond/1000, end.load.Refused-start.load.Refused)
	perMillion := func(cpu time.Duration) float64 {
		if spans == 0 {
			return 0
		}
		return cpu.Seconds() / float64(spans) * 1e6
	}
	if pid != 0 {
		cpu := end.collector.CPU - start.collector.CPU
		fmt.Fprintf(out, "collector (pid %d): %.2f CPU s per million spans (%.2f cores busy); RSS %s at the end, peak %s\n",
			pid, perMillion(cpu), cpu.Seconds()/window.Seconds(), mib(end.collector.RSS), mib(end.collector.PeakRSS))
	}
	if cpu := end.self.CPU - start.self.CPU; cpu > 0 {
		fmt.Fprintf(out, "ragload itself: %.2f CPU s per million spans (%.2f cores busy)\n", perMillion(cpu), cpu.Seconds()/window.Seconds())
	}
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
