// Command ragprecision-sampling-compare measures, in one run with a fixed
// seed, what a fixed sampling_percentage under the judge's budget and
// adaptive_sampling do to bursty traffic: an hour of a busy data source,
// quiet but for ten minutes at ten times the traffic in which the true
// precision is lower, and a rare data source at 1/100 of the traffic. It
// drives the real processor and its judge's budget on a simulated clock,
// against a local judge whose verdicts are known, and prints for each run
// the share of selected spans with status budget, the hour's mean (weighted
// by 1/sample_rate) against the true one, and the rare source's judged
// spans (docs/BENCHMARKS.md):
//
//	go run ./cmd/ragprecision-sampling-compare
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if err := run1(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-sampling-compare:", err)
		os.Exit(1)
	}
}

func run1(args []string, stdout, stderr io.Writer) error {
	sc := defaultScenario()
	fs := flag.NewFlagSet("ragprecision-sampling-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&sc.seed, "seed", sc.seed, "seed of the traffic (trace IDs, relevance)")
	fs.DurationVar(&sc.length, "length", sc.length, "simulated time")
	fs.Float64Var(&sc.quietPerSecond, "quiet", sc.quietPerSecond, "busy data source's retrievals a second outside the burst")
	fs.Float64Var(&sc.budget, "budget", sc.budget, "judge.max_requests_per_second")
	fs.Float64Var(&sc.spend, "spend", sc.spend, "judge requests a second both runs are set for")
	fs.IntVar(&sc.chunks, "chunks", sc.chunks, "chunks a retrieval")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	rows, err := compare(sc, true)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, render(sc, rows))
	fmt.Fprintf(stderr, "(%s of wall time)\n", time.Since(start).Round(time.Second))
	return nil
}
