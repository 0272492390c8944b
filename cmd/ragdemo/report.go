package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// maxQueryWidth is how much of a query the table shows.
const maxQueryWidth = 46

// printTable writes one row per retrieval span: what was asked, how it was
// ranked, and what the processor made of it.
func printTable(w io.Writer, results []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tQUERY\tRANKING\tDIALECT\tSTATUS\tCP\tRESULT\tVERDICTS\tREFERENCE")
	for i, r := range results {
		cp, pass := "-", "-"
		if r.scored {
			cp = strconv.FormatFloat(r.score, 'f', 3, 64)
			pass = "fail"
			if r.passed {
				pass = "PASS"
			}
		}
		status := r.status
		switch {
		case !r.received:
			status = "missing"
		case status == "":
			status = "(none)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			i+1, truncate(r.question.text, maxQueryWidth), r.ranking, r.question.dialect,
			status, cp, pass, verdictMarks(r.verdicts), orDash(r.referenceSource))
	}
	return tw.Flush()
}

// verdictMarks renders verdicts in rank order: ✓ relevant, ✗ not.
func verdictMarks(vs []bool) string {
	if len(vs) == 0 {
		return "-"
	}
	var b strings.Builder
	for _, v := range vs {
		if v {
			b.WriteString("✓")
		} else {
			b.WriteString("✗")
		}
	}
	return b.String()
}

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// summary is the comparison the demo is about: the same chunks, ranked well
// and badly.
type summary struct {
	good, bad        meanCP
	scored, received int
}

// meanCP accumulates a mean of CP values.
type meanCP struct {
	sum float64
	n   int
}

func (m *meanCP) add(v float64) { m.sum += v; m.n++ }

func (m meanCP) String() string {
	if m.n == 0 {
		return "no scores"
	}
	return fmt.Sprintf("%.3f over %d", m.sum/float64(m.n), m.n)
}

func (m meanCP) mean() float64 {
	if m.n == 0 {
		return 0
	}
	return m.sum / float64(m.n)
}

func summarize(results []result) summary {
	var s summary
	for _, r := range results {
		if r.received {
			s.received++
		}
		if !r.scored {
			continue
		}
		s.scored++
		if r.ranking == rankingGood {
			s.good.add(r.score)
		} else {
			s.bad.add(r.score)
		}
	}
	return s
}

// metricPrefixes are the metric families printed from the scrape: the
// histogram that dashboards and alerts use, and the processor's own counts.
var metricPrefixes = []string{
	"rag_contextual_precision",
	"otelcol_processor_ragprecision_candidate_spans_total",
	"otelcol_processor_ragprecision_selected_spans_total",
	"otelcol_processor_ragprecision_scored_spans_total",
	"otelcol_processor_ragprecision_unscored_spans_total",
	"otelcol_processor_ragprecision_judge_requests_total",
}

// scrapeMetrics fetches a Prometheus text exposition and returns its sample
// lines (and the # TYPE lines) of the families in metricPrefixes.
func scrapeMetrics(ctx context.Context, url string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return filterMetrics(resp.Body)
}

// filterMetrics keeps the lines of the families in metricPrefixes.
func filterMetrics(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		name := line
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = rest
		} else if strings.HasPrefix(line, "#") {
			continue
		}
		for _, p := range metricPrefixes {
			if strings.HasPrefix(name, p) {
				out = append(out, line)
				break
			}
		}
	}
	return out, sc.Err()
}
