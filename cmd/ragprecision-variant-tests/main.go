// Command ragprecision-variant-tests writes
// deploy/prometheus/ragprecision.variants.test.yml, the promtool tests of
// RAGVariantRegressed on a day of realistic traffic: two variants of a
// retriever drawn from a seeded noise model (a daily traffic cycle, Poisson
// counts, verdicts by rank, CP computed by package scoring), once equal and
// once with one ranking worse. What each test expects comes from replaying
// the alert over the same counters in Go:
//
//	go run ./cmd/ragprecision-variant-tests -o deploy/prometheus/ragprecision.variants.test.yml
//
// The file is committed; a test fails when it is not what this program
// writes. -simulate N replays N days per scenario and prints how often the
// alert fires, the figures of docs/OPERATING.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-variant-tests:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ragprecision-variant-tests", flag.ContinueOnError)
	out := fs.String("o", "", "write the test file here instead of standard output")
	days := fs.Int("simulate", 0, "instead, replay this many days of each scenario and print how often the alert fires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *days > 0 {
		return simulateDays(stdout, *days)
	}
	data := render()
	if *out != "" {
		return os.WriteFile(*out, data, 0o644)
	}
	_, err := stdout.Write(data)
	return err
}
