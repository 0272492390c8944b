// Command ragprecision-dashboard generates the Grafana dashboard of
// deploy/grafana/ragprecision.json with the Grafana Foundation SDK:
//
//	go run ./cmd/ragprecision-dashboard -o deploy/grafana/ragprecision.json
//
// The JSON is committed; a test fails when it is not what this program
// writes, or when a query names a metric or label the collector does not
// export.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-dashboard:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ragprecision-dashboard", flag.ContinueOnError)
	out := fs.String("o", "", "write the dashboard JSON here instead of standard output")
	if err := fs.Parse(args); err != nil {
		return err
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

// render is the dashboard's JSON as committed.
func render() ([]byte, error) {
	d, err := build()
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
