// Command ragprecision-canary-tests writes
// deploy/prometheus/ragprecision.canary.test.yml, the promtool tests of
// RAGJudgeDrifted over ten days of the drift canary at its defaults: a
// canary file drawn from a seeded noise model (labels by rank, errors that
// cluster in hard retrievals), judged by a steady judge and by one that
// answers at random from day 8. What each test expects comes from replaying
// the alert over the same counters in Go:
//
//	go run ./cmd/ragprecision-canary-tests -o deploy/prometheus/ragprecision.canary.test.yml
//
// The file is committed; a test fails when it is not what this program
// writes. -simulate N replays N fortnights per case and prints how often
// the alert fires and how soon, the figures of docs/OPERATING.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-canary-tests:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ragprecision-canary-tests", flag.ContinueOnError)
	out := fs.String("o", "", "write the test file here instead of standard output")
	n := fs.Int("simulate", 0, "instead, replay this many fortnights per case and print how often the alert fires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n > 0 {
		simulateFortnights(stdout, *n)
		return nil
	}
	data, err := render()
	if err != nil {
		return err
	}
	if *out != "" {
		return os.WriteFile(*out, data, 0o644)
	}
	_, err = stdout.Write(data)
	return err
}
