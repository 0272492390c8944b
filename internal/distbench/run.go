package distbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/loadgen"
	"github.com/ragprecision/ragprecision/internal/otlpsink"
	"github.com/ragprecision/ragprecision/internal/procstat"
)

// Options configures Run.
type Options struct {
	// Collector is the distribution's binary (bin/otelcol-ragprecision).
	Collector string
	// Pipelines are measured in this order, in every round.
	Pipelines []Pipeline
	// Rounds is the number of measurements of each pipeline.
	Rounds int
	// Warmup is the load sent after start-up and before the measured
	// window: connections, batch sizes and the judge's queue settle.
	Warmup time.Duration
	// Measure is the measured window.
	Measure time.Duration
	// Senders and Traffic are the load (loadgen).
	Senders int
	Traffic loadgen.Traffic
	// LoadCompression is the load's compression: none or gzip.
	LoadCompression string
	// ExportCompression is the collector exporter's: gzip (its default)
	// or none.
	ExportCompression string
	// JudgeDelay is how long the LLM judge takes to answer.
	JudgeDelay time.Duration
	// Dir holds the generated configs and the collectors' logs.
	Dir string
	// Progress, if not nil, gets a line per measurement.
	Progress io.Writer
}

// DefaultOptions are the settings of `make bench`, for collector.
func DefaultOptions(collector string) Options {
	return Options{
		Collector: collector, Pipelines: DefaultPipelines(), Rounds: 5,
		Warmup: 3 * time.Second, Measure: 8 * time.Second,
		Senders: 4, Traffic: loadgen.DefaultTraffic(),
		LoadCompression: "none", ExportCompression: "gzip", JudgeDelay: 50 * time.Millisecond,
	}
}

// ShortOptions are a few seconds per pipeline, for CI: enough to catch a
// change that doubles the cost of a span, not to measure it.
func ShortOptions(collector string) Options {
	o := DefaultOptions(collector)
	o.Rounds, o.Warmup, o.Measure = 3, time.Second, 1500*time.Millisecond
	return o
}

// Measurement is one pipeline measured once.
type Measurement struct {
	Pipeline Pipeline
	Round    int
	// Window is the measured window; Spans were accepted in it and CPU is
	// what the collector's process used in it.
	Window time.Duration
	Spans  int64
	CPU    time.Duration
	// Driver is the CPU the benchmark's own process (load generator, sink,
	// LLM judge) used in the window, on the same cores.
	Driver time.Duration
	// Others is the CPU other processes at normal priority used in the
	// window, of Cores × Window available; Niced is what processes of
	// lowered priority (nice > 0) used, which yield to the collector.
	Others, Niced time.Duration
	Cores         int
	// RSS is the collector's resident memory at the end of the window,
	// PeakRSS the most it had.
	RSS, PeakRSS int64
	// Sent is every span the receiver accepted (warm-up included), and
	// Received every span the sink counted once the collector had stopped.
	Sent, Received int64
	// RetrievalSpans is how many of Sent were retrieval spans.
	RetrievalSpans int64
	// Refused counts export attempts refused (memory_limiter) and retried.
	Refused int64
	// Counts are ragprecision's counters after the load, before shutdown.
	Counts *processorCounts
	// Config and Log are the files of the collector's config and output.
	Config, Log string
}

// SpansPerSecond is the throughput in the window.
func (m Measurement) SpansPerSecond() float64 { return float64(m.Spans) / m.Window.Seconds() }

// CPUPerMillion is the collector's CPU seconds per million spans.
func (m Measurement) CPUPerMillion() float64 { return m.CPU.Seconds() / float64(m.Spans) * 1e6 }

// DriverPerMillion is the benchmark process's CPU seconds per million
// spans: what the load generator and sink took from the collector's cores.
func (m Measurement) DriverPerMillion() float64 { return m.Driver.Seconds() / float64(m.Spans) * 1e6 }

// OthersShare is the share of the machine's CPU that other processes at
// normal priority took in the window: the noise the figures carry.
func (m Measurement) OthersShare() float64 { return m.share(m.Others) }

// NicedShare is the share of the machine's CPU that processes of lowered
// priority took in the window.
func (m Measurement) NicedShare() float64 { return m.share(m.Niced) }

func (m Measurement) share(d time.Duration) float64 {
	if m.Cores == 0 {
		return 0
	}
	return d.Seconds() / (float64(m.Cores) * m.Window.Seconds())
}

// Lost is the spans accepted but never exported.
func (m Measurement) Lost() int64 { return m.Sent - m.Received }

// Result is every measurement of a run.
type Result struct {
	Options      Options
	Measurements []Measurement
}

// Run measures every pipeline Rounds times, interleaved. It stops at the
// first failure, returning what was measured until then.
func Run(ctx context.Context, o Options) (Result, error) {
	res := Result{Options: o}
	if _, err := os.Stat(o.Collector); err != nil {
		return res, fmt.Errorf("collector binary: %w (build it with `make build`)", err)
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "distbench-")
		if err != nil {
			return res, err
		}
		res.Options.Dir, o.Dir = dir, dir
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return res, err
	}
	for round := 1; round <= o.Rounds; round++ {
		for _, p := range o.Pipelines {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			m, err := measure(ctx, o, p, round)
			if err != nil {
				return res, fmt.Errorf("round %d, pipeline (%s): %w", round, p.Name, err)
			}
			res.Measurements = append(res.Measurements, m)
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "round %d/%d (%s) %-42s %7.1fk spans/s %6.2f CPU s/M spans (driver %.2f)  RSS %4.0f MiB  others %3.0f%% (+%.0f%% niced)  lost %d%s\n",
					round, o.Rounds, p.Name, p.Title, m.SpansPerSecond()/1000, m.CPUPerMillion(), m.DriverPerMillion(),
					float64(m.PeakRSS)/(1<<20), 100*m.OthersShare(), 100*m.NicedShare(), m.Lost(), countsNote(m.Counts))
			}
		}
	}
	return res, nil
}

func countsNote(c *processorCounts) string {
	if c == nil {
		return ""
	}
	return "  " + c.String()
}

// measure runs pipeline p once: start the sink, the judge and the
// collector; send the warm-up and the measured window; stop the load, read
// the processor's counters, stop the collector (which flushes everything it
// holds) and count what arrived.
func measure(ctx context.Context, o Options, p Pipeline, round int) (Measurement, error) {
	m := Measurement{Pipeline: p, Round: round}
	sink, err := otlpsink.StartCounting("127.0.0.1:0")
	if err != nil {
		return m, err
	}
	defer sink.Stop()
	params := configParams{Pipeline: p, Sink: sink.Addr(), ExportCompression: o.ExportCompression, JudgeDelay: o.JudgeDelay}
	if !o.Traffic.Dialects.Only(loadgen.DialectProject) {
		params.ReferenceKey = loadgen.ReferenceKey
	}
	if p.LLMJudge {
		judge := chattest.NewServer(fixedDelayJudge(o.JudgeDelay))
		defer judge.Close()
		params.JudgeURL = judge.URL
	}
	ports, err := freePorts(3)
	if err != nil {
		return m, err
	}
	params.GRPCPort, params.HealthPort, params.MetricsPort = ports[0], ports[1], ports[2]
	cfg, err := renderConfig(params)
	if err != nil {
		return m, err
	}
	base := filepath.Join(o.Dir, fmt.Sprintf("%s-round%d", p.Name, round))
	m.Config, m.Log = base+".yaml", base+".log"
	if err := os.WriteFile(base+".yaml", cfg, 0o600); err != nil {
		return m, err
	}
	col, err := startCollector(o.Collector, base+".yaml", base+".log")
	if err != nil {
		return m, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = col.stop(5 * time.Second)
		}
	}()
	if err := col.waitHealthy(ctx, "127.0.0.1:"+params.HealthPort, 60*time.Second); err != nil {
		return m, err
	}

	load, err := loadgen.Start(loadgen.Options{
		Endpoint: "127.0.0.1:" + params.GRPCPort, Senders: o.Senders, Traffic: o.Traffic,
		Compression: o.LoadCompression, Seed: uint64(round),
	})
	if err != nil {
		return m, err
	}
	defer load.Stop()
	if err := sleep(ctx, load, o.Warmup); err != nil {
		return m, err
	}
	before, err := procstat.Read(col.pid())
	if err != nil {
		return m, err
	}
	selfBefore, _ := procstat.Self()
	machineBefore, _ := procstat.ReadMachine()
	start := load.Stats()
	if err := sleep(ctx, load, o.Measure); err != nil {
		return m, err
	}
	after, err := procstat.Read(col.pid())
	if err != nil {
		return m, err
	}
	end := load.Stats()
	selfAfter, _ := procstat.Self()
	machineAfter, _ := procstat.ReadMachine()
	m.Driver = selfAfter.CPU - selfBefore.CPU
	m.Niced = machineAfter.Nice - machineBefore.Nice
	m.Others = max(0, machineAfter.Busy-machineBefore.Busy-m.Niced-m.Driver-(after.CPU-before.CPU))
	m.Cores = machineAfter.Cores
	m.Window, m.Spans = end.At.Sub(start.At), end.Spans-start.Spans
	m.CPU, m.RSS, m.PeakRSS = after.CPU-before.CPU, after.RSS, after.PeakRSS

	final, err := load.Stop()
	if err != nil {
		return m, err
	}
	m.Sent, m.RetrievalSpans, m.Refused = final.Spans, final.RetrievalSpans, final.Refused
	if p.Ragprecision {
		counts, err := scrapeCounts("127.0.0.1:" + params.MetricsPort)
		if err != nil {
			return m, fmt.Errorf("reading ragprecision's counters: %w", err)
		}
		m.Counts = &counts
	}
	stopped = true
	// shutdown_timeout (5 s by default) bounds how long held spans are
	// waited for; the exporter's queue then flushes.
	if err := col.stop(60 * time.Second); err != nil {
		return m, err
	}
	m.Received = sink.Spans()
	return m, nil
}

// sleep waits for d, failing if the load stops (a refused export) or ctx
// ends first.
func sleep(ctx context.Context, load *loadgen.Load, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-load.Done():
		if err := load.Err(); err != nil {
			return err
		}
		return errors.New("the load stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fixedDelayJudge answers like chattest.KeywordJudge after delay.
func fixedDelayJudge(delay time.Duration) chattest.Handler {
	keyword := chattest.KeywordJudge("harbour")
	return func(n int, r chattest.Request) chattest.Reply {
		rep := keyword(n, r)
		rep.Delay = delay
		return rep
	}
}
