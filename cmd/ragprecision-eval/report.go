package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// printReport writes the agreement table, the cost table, the stage table
// (for judges that report stages) and the notes.
func printReport(w io.Writer, cs []candidate, t *tally) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if t.recorded {
		fmt.Fprintln(tw, "data source\tspans\tjudge\tprecision\trecall\tF1\tkappa\taccuracy\tCP MAE\tmean CP judged\tmean CP recorded\t")
	} else {
		fmt.Fprintln(tw, "split\tretrievals\tjudge\tprecision\trecall\tF1\tkappa\taccuracy\tCP MAE\tmean CP judged\tmean CP true\t")
	}
	for _, s := range t.splits {
		rows := []group{{s, ""}}
		if t.byType {
			for _, typ := range append(t.types, otherTypes) {
				rows = append(rows, group{s, typ})
			}
		}
		for _, g := range rows {
			label := t.rowLabel(g)
			for i, c := range cs {
				m := t.judges[i].metrics(g)
				if g.typ != "" && m.Retrievals == 0 {
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%.3f\t%.3f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n",
					label, m.Retrievals, c.name, m.Precision, m.Recall, m.F1, kappa(m.Kappa), m.Accuracy, m.CPMAE, m.MeanJudgedCP, m.MeanTrueCP)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if t.compared {
		fmt.Fprintln(w, "\nNothing was judged here: what the judging cost is in the replaying collector's otelcol_processor_ragprecision_judge_* metrics.")
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	unit := "retrieval"
	if t.recorded {
		unit = "span"
	}
	fmt.Fprintf(tw, "judge\t%[1]ss\tfailed\trequests/%[1]s\tprompt tokens/%[1]s\tcompletion tokens/%[1]s\tcache hits\ttime/chunk\t\n", unit)
	for i, c := range cs {
		jt := t.judges[i]
		requests, prompt, completion, hits := "0", "0", "0", "-"
		if c.cost != nil {
			n := float64(max(jt.retrievals, 1))
			requests = fmt.Sprintf("%.2f", float64(c.cost.requests.Load())/n)
			prompt = fmt.Sprintf("%.0f", float64(c.cost.promptTokens.Load())/n)
			completion = fmt.Sprintf("%.0f", float64(c.cost.completionTokens.Load())/n)
			if lookups := c.cost.cacheHits.Load() + c.cost.cacheMisses.Load(); lookups > 0 {
				hits = fmt.Sprintf("%.1f%%", 100*float64(c.cost.cacheHits.Load())/float64(lookups))
			}
		}
		perChunk := "-"
		if jt.chunks > 0 {
			perChunk = (jt.took / time.Duration(jt.chunks)).Round(100 * time.Nanosecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", c.name, jt.retrievals, jt.failed, requests, prompt, completion, hits, perChunk)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := cs[0]; t.recorded && c.cost != nil {
		// What judging the recording again cost, in all.
		fmt.Fprintf(w, "\n%s: %d requests, %d prompt and %d completion tokens for the %d spans judged\n", c.name,
			c.cost.requests.Load(), c.cost.promptTokens.Load(), c.cost.completionTokens.Load(), t.judges[0].retrievals)
	}

	for i, c := range cs {
		if line := stageLine(t.judges[i]); line != "" {
			fmt.Fprintf(w, "\n%s verdicts by deciding stage: %s\n", c.name, line)
		}
	}

	notes := ratios(cs, t)
	for i, c := range cs {
		if jt := t.judges[i]; jt.failed > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d retrievals failed and are left out of its figures; first: %v",
				c.name, jt.failed, jt.retrievals, jt.firstErr))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}

// stageLine is "lexical 61.0% (3050), llm 39.0% (1950)", or "" when the
// judge has fewer than two stages (any judge but a cascade).
func stageLine(jt *judgeTally) string {
	total := 0
	for _, n := range jt.stages {
		total += n
	}
	if total == 0 || len(jt.stageOrder) < 2 {
		return ""
	}
	var parts []string
	for _, st := range jt.stageOrder {
		n := jt.stages[st]
		parts = append(parts, fmt.Sprintf("%s %.1f%% (%d)", st, 100*float64(n)/float64(total), n))
	}
	return strings.Join(parts, ", ")
}

// ratios compares every judge with the baseline on each split: F1 and
// kappa higher is better, CP MAE lower is better.
func ratios(cs []candidate, t *tally) []string {
	base := -1
	for i, c := range cs {
		if c.baseline {
			base = i
		}
	}
	if base < 0 {
		return nil
	}
	var out []string
	for _, s := range t.splits {
		b := t.judges[base].metrics(group{s, ""})
		for i, c := range cs {
			if i == base {
				continue
			}
			m := t.judges[i].metrics(group{s, ""})
			out = append(out, fmt.Sprintf("%s vs %s on %s: F1 x%s, CP MAE x%s", c.name, cs[base].name, s,
				ratio(m.F1, b.F1), ratio(m.CPMAE, b.CPMAE)))
		}
	}
	return out
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func kappa(k float64) string {
	if math.IsNaN(k) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", k)
}
