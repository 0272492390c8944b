package distbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Spread is the minimum, median and maximum of some values.
type Spread struct{ Min, Median, Max float64 }

func spreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	v := slices.Clone(values)
	slices.Sort(v)
	mid := len(v) / 2
	median := v[mid]
	if len(v)%2 == 0 {
		median = (v[mid-1] + v[mid]) / 2
	}
	return Spread{Min: v[0], Median: median, Max: v[len(v)-1]}
}

// format writes the spread as "min / median / max" with verb f.
func (s Spread) format(f string) string {
	return fmt.Sprintf(f+" / "+f+" / "+f, s.Min, s.Median, s.Max)
}

// Summary is one pipeline over every round.
type Summary struct {
	Pipeline Pipeline
	Rounds   int
	// SpansPerSecond and CPUPerMillion are over the rounds.
	SpansPerSecond, CPUPerMillion Spread
	// ThroughputRatio and CPURatio are this pipeline's figure divided by
	// the baseline's of the same round, over the rounds.
	ThroughputRatio, CPURatio Spread
	// PeakRSS is in MiB.
	PeakRSS Spread
	// Driver is the benchmark process's CPU s per million spans; Others and
	// Niced the share of the machine other processes used, in %.
	Driver, Others, Niced Spread
	// Lost is the most spans lost in any round; Refused the export
	// attempts refused in all of them.
	Lost, Refused int64
	// Last holds the counters of the last round (nil without ragprecision).
	Last *processorCounts
	// Scored is the share of selected spans that were scored, over the
	// rounds (NaN-free: rounds that selected nothing are left out).
	Scored Spread
}

// Summaries summarises every pipeline; ratios are to the first pipeline
// (the baseline) measured in the same round.
func (r Result) Summaries() []Summary {
	if len(r.Options.Pipelines) == 0 {
		return nil
	}
	baseline := map[int]Measurement{}
	baseName := r.Options.Pipelines[0].Name
	for _, m := range r.Measurements {
		if m.Pipeline.Name == baseName {
			baseline[m.Round] = m
		}
	}
	var out []Summary
	for _, p := range r.Options.Pipelines {
		s := Summary{Pipeline: p}
		var tput, cpu, tputRatio, cpuRatio, rss, scored, driver, others, niced []float64
		for _, m := range r.Measurements {
			if m.Pipeline.Name != p.Name {
				continue
			}
			s.Rounds++
			tput = append(tput, m.SpansPerSecond())
			cpu = append(cpu, m.CPUPerMillion())
			rss = append(rss, float64(m.PeakRSS)/(1<<20))
			driver = append(driver, m.DriverPerMillion())
			others = append(others, 100*m.OthersShare())
			niced = append(niced, 100*m.NicedShare())
			if b, ok := baseline[m.Round]; ok {
				tputRatio = append(tputRatio, m.SpansPerSecond()/b.SpansPerSecond())
				cpuRatio = append(cpuRatio, m.CPUPerMillion()/b.CPUPerMillion())
			}
			s.Lost = max(s.Lost, m.Lost())
			s.Refused += m.Refused
			if m.Counts != nil {
				s.Last = m.Counts
				if m.Counts.Selected > 0 {
					scored = append(scored, m.Counts.Scored/m.Counts.Selected)
				}
			}
		}
		if s.Rounds == 0 {
			continue
		}
		s.SpansPerSecond, s.CPUPerMillion = spreadOf(tput), spreadOf(cpu)
		s.ThroughputRatio, s.CPURatio = spreadOf(tputRatio), spreadOf(cpuRatio)
		s.PeakRSS, s.Scored = spreadOf(rss), spreadOf(scored)
		s.Driver, s.Others, s.Niced = spreadOf(driver), spreadOf(others), spreadOf(niced)
		out = append(out, s)
	}
	return out
}

// WriteTable writes the summaries as a Markdown table: min / median / max
// of each figure, and of its ratio to the baseline of the same round.
func (r Result) WriteTable(w io.Writer) {
	sums := r.Summaries()
	fmt.Fprintf(w, "| pipeline | spans/s (k) | vs (a) | CPU s per M spans | vs (a) | best vs best | peak RSS (MiB) | scored / selected | lost | load+sink CPU s/M | others' CPU %% | niced %% |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	base := sums[0].CPUPerMillion.Min
	for _, s := range sums {
		k := Spread{s.SpansPerSecond.Min / 1000, s.SpansPerSecond.Median / 1000, s.SpansPerSecond.Max / 1000}
		scored := "—"
		if s.Last != nil {
			scored = "none selected"
			if s.Last.Selected > 0 {
				scored = s.Scored.format("%.2f")
			}
		}
		fmt.Fprintf(w, "| (%s) %s | %s | %s | %s | %s | %.2f | %s | %s | %d | %.1f | %s | %s |\n",
			s.Pipeline.Name, s.Pipeline.Title, k.format("%.0f"), s.ThroughputRatio.format("%.2f"),
			s.CPUPerMillion.format("%.1f"), s.CPURatio.format("%.2f"), s.CPUPerMillion.Min/base,
			s.PeakRSS.format("%.0f"), scored, s.Lost,
			s.Driver.Median, s.Others.format("%.0f"), s.Niced.format("%.0f"))
	}
}

// WriteReport writes the set-up, the table, and what was not scored.
func (r Result) WriteReport(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "Whole distribution: %d rounds, interleaved (%s); per round %s warm-up, %s measured.\n",
		o.Rounds, pipelineNames(o.Pipelines), o.Warmup, o.Measure)
	fmt.Fprintf(w, "Load: %d senders, %s, OTLP/gRPC compression %s; exporter compression %s; LLM judge answers after %s.\n",
		o.Senders, o.Traffic, o.LoadCompression, o.ExportCompression, o.JudgeDelay)
	fmt.Fprintf(w, "Each cell: min / median / max over the rounds; \"vs (a)\": the ratio to (a) of the same round; CPU is the collector process's.\n")
	fmt.Fprintf(w, "best vs best: the lowest CPU per span of the rounds over (a)'s lowest (other processes only add cost, so the lowest is the least disturbed).\n")
	fmt.Fprintf(w, "load+sink: the benchmark's own process (median); others' CPU: the share of the machine other processes took in the windows,\n")
	fmt.Fprintf(w, "niced: the share processes of lowered priority took (they yield to the collector).\n\n")
	r.WriteTable(w)
	var notes []string
	for _, s := range r.Summaries() {
		if s.Last != nil && len(s.Last.Unscored) > 0 {
			notes = append(notes, fmt.Sprintf("(%s) last round: %s", s.Pipeline.Name, s.Last))
		}
		if s.Refused > 0 {
			notes = append(notes, fmt.Sprintf("(%s) %d export attempts refused by memory_limiter and retried", s.Pipeline.Name, s.Refused))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}

func pipelineNames(ps []Pipeline) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}
