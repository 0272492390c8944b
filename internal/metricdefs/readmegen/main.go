// Command readmegen writes the metric tables of metadata.yaml into the
// Markdown files it is given, between metricdefs' markers (go generate).
//
//	go run ./internal/metricdefs/readmegen README.md processor/ragprecisionprocessor/README.md
package main

import (
	"fmt"
	"os"

	"github.com/ragprecision/ragprecision/internal/metricdefs"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "readmegen:", err)
		os.Exit(1)
	}
}

func run(files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("usage: readmegen FILE.md ...")
	}
	ms, err := metricdefs.Load()
	if err != nil {
		return err
	}
	tables := metricdefs.Render(ms)
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		out, err := metricdefs.Replace(doc, tables)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := os.WriteFile(f, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
