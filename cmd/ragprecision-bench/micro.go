package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// benchLine is one result line of `go test -bench` output.
type benchLine struct {
	pkg  string
	name string // without the Benchmark prefix and the -GOMAXPROCS suffix
	// metrics by unit: ns/op, B/op, allocs/op and custom ones.
	metrics map[string]float64
	order   []string // units in the order printed
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBenchOutput reads the result lines of `go test -bench` output (any
// other line is ignored), remembering which package each came from.
func parseBenchOutput(out string) []benchLine {
	var lines []benchLine
	pkg := ""
	for line := range strings.SplitSeq(out, "\n") {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		l := benchLine{pkg: pkg, name: procsSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), ""), metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			l.metrics[f[i+1]] = v
			l.order = append(l.order, f[i+1])
		}
		lines = append(lines, l)
	}
	return lines
}

func find(lines []benchLine, name string) (benchLine, bool) {
	for _, l := range lines {
		if l.name == name {
			return l, true
		}
	}
	return benchLine{}, false
}

// writeMicro prints the figures docs/BENCHMARKS.md sets targets for, each next to
// its baseline from the same run, then every benchmark line.
func writeMicro(w io.Writer, lines []benchLine) {
	fmt.Fprintln(w, "Microbenchmarks (go test -bench; every ratio is to a baseline measured in the same run)")
	fmt.Fprintln(w)
	// Pass-through: the processor's batches, then Recognise alone on each
	// kind of span that is not a retrieval; each against the baselines
	// timed alongside it (internal/passbench).
	for _, l := range lines {
		var what, under string
		switch {
		case strings.HasPrefix(l.name, "PassThrough/") && strings.HasSuffix(l.pkg, "/ragprecisionprocessor"):
			what, under = "pass-through at the processor, "+strings.ReplaceAll(strings.TrimPrefix(l.name, "PassThrough/"), "_", " "), "ragprecision"
		case strings.HasPrefix(l.name, "PassThrough/") && strings.HasSuffix(l.pkg, "/spanreader"):
			what, under = "pass-through, Recognise of "+strings.TrimPrefix(l.name, "PassThrough/"), "recognise"
		default:
			continue
		}
		ns, ok := l.metrics[under+"-ns/span"]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "- %s: %.1f ns/span, %.0f allocs per batch = %.2f× a bare attribute walk (keys and value types, %.1f ns/span; target: ≤ 2×, 0 allocs), %.2f× a walk over the keys only (%.1f), %.2f× a walk that reads every string value (%.1f)\n",
			what, ns, l.metrics["allocs/op"], l.metrics[under+"-x-walk"], l.metrics["walk-ns/span"],
			l.metrics[under+"-x-keys"], l.metrics["keys-ns/span"], l.metrics[under+"-x-read"], l.metrics["read-ns/span"])
	}
	for _, l := range lines {
		if strings.HasPrefix(l.name, "JudgedThroughput/") {
			fmt.Fprintf(w, "- judged throughput, %s: %.1f spans/s = %.3f of the Little's-law limit %.0f spans/s (target: ≥ 0.95)\n",
				strings.TrimPrefix(l.name, "JudgedThroughput/"), l.metrics["spans/s"], l.metrics["of-limit"], l.metrics["limit-spans/s"])
		}
	}
	for _, l := range lines {
		if r, ok := l.metrics["x-map-lookup"]; ok {
			fmt.Fprintf(w, "- cache hit, %s: %.0f ns per judgement = %.0f× a bare map lookup per chunk, %.0f allocs\n",
				strings.TrimPrefix(l.name, "CacheHit/"), l.metrics["ns/op"], r, l.metrics["allocs/op"])
		}
	}
	for _, l := range lines {
		if s, ok := l.metrics["speedup"]; ok {
			fmt.Fprintf(w, "- lexical judge, %s: %.0f ns/chunk, %.2f× faster than the frozen reference judge timed alongside\n",
				l.name, l.metrics["ns/chunk"], s)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| package | benchmark | ns/op | allocs/op | other |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, l := range lines {
		var other []string
		for _, unit := range l.order {
			switch unit {
			case "ns/op", "allocs/op", "B/op":
				continue
			}
			other = append(other, fmt.Sprintf("%s %s", strconv.FormatFloat(l.metrics[unit], 'g', 4, 64), unit))
		}
		allocs := "—"
		if v, ok := l.metrics["allocs/op"]; ok {
			allocs = strconv.FormatFloat(v, 'f', 0, 64)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", shortPkg(l.pkg), l.name,
			strconv.FormatFloat(l.metrics["ns/op"], 'g', 4, 64), allocs, strings.Join(other, ", "))
	}
}

// shortPkg drops the module path.
func shortPkg(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/ragprecision/ragprecision/")
}
