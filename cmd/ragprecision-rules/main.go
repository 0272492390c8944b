// Command ragprecision-rules writes deploy/prometheus/ragprecision.rules.yml
// (or another rule file) with every time window multiplied by one factor:
// the range selectors, subquery steps and offsets of each expression, and
// each for:, keep_firing_for: and group interval:. It is how the rules run
// on a shorter time scale (the live test, a demo, a quiet staging system)
// without a second copy to keep in step.
//
//	ragprecision-rules -scale 1/120 deploy/prometheus/ragprecision.rules.yml > scaled.rules.yml
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ragprecision/ragprecision/internal/promcheck"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-rules:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ragprecision-rules", flag.ContinueOnError)
	scale := fs.String("scale", "1", `factor applied to every window, as a decimal or a fraction ("1/120": an hour becomes 30s)`)
	out := fs.String("o", "", "write here instead of standard output")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ragprecision-rules [-scale FACTOR] [-o FILE] RULES.yml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("one rule file expected, got %d", fs.NArg())
	}
	factor, err := promcheck.ParseFactor(*scale)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	scaled, err := promcheck.ScaleRules(data, factor)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if *out != "" {
		return os.WriteFile(*out, scaled, 0o644)
	}
	_, err = stdout.Write(scaled)
	return err
}
