package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ragprecision/ragprecision/scoring"
)

// maxQueryWidth is how much of a query the table shows.
const maxQueryWidth = 46

// printTable writes one row per retrieval span: what was asked, which
// retriever ranked the chunks, and what the processor made of it.
func printTable(w io.Writer, results []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tQUERY\tRETRIEVER\tDIALECT\tSTATUS\tCP\tRESULT\tOUTCOME\tNDCG\tVERDICTS\tREFERENCE")
	for i, r := range results {
		cp, pass, ndcg := "-", "-", "-"
		if r.scored {
			cp = strconv.FormatFloat(r.score, 'f', 3, 64)
			pass = "fail"
			if r.passed {
				pass = "PASS"
			}
		}
		if r.hasNDCG {
			ndcg = strconv.FormatFloat(r.ndcg, 'f', 3, 64)
		}
		status := r.status
		switch {
		case !r.received:
			status = "missing"
		case status == "":
			status = "(none)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			i+1, truncate(r.question.text, maxQueryWidth), retrieverLabel(r), r.question.dialect,
			status, cp, pass, orDash(r.retrievalOutcome), ndcg, verdictMarks(r.verdicts), orDash(r.referenceSource))
	}
	return tw.Flush()
}

// retrieverLabel is the retriever version of a row, with the ranking it
// returns: the variant as the span came back, else as it was sent.
func retrieverLabel(r result) string {
	v := r.variant
	if v == "" {
		v = r.sentCase.variant
	}
	return fmt.Sprintf("%s (%s)", v, r.ranking)
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

// explainRankings says why good rankings came out other than ideal, rank
// by rank: a chunk judged not relevant above a relevant one is either a
// distractor the demo's data puts there on purpose (corpus.go: a good
// retriever lets a near-miss in), or a chunk the author labelled relevant
// and the judge did not. Nothing when every good ranking is ideal.
func explainRankings(results []result) []string {
	var lines []string
	for i, r := range results {
		if !r.scored || r.ranking != rankingGood || r.retrievalOutcome == outcomeIdeal || len(r.verdicts) != len(r.chunkIDs) {
			continue
		}
		last := slices.Index(r.verdicts, true)
		for k := len(r.verdicts) - 1; k >= 0; k-- {
			if r.verdicts[k] {
				last = k
				break
			}
		}
		var why []string
		for k := 0; k < last; k++ {
			if r.verdicts[k] {
				continue
			}
			id := r.chunkIDs[k]
			if slices.Contains(r.question.relevant, id) {
				why = append(why, fmt.Sprintf("rank %d is %s, which the author labels relevant and the judge did not", k+1, id))
			} else {
				why = append(why, fmt.Sprintf("rank %d is %s, a distractor put there on purpose (the judge agrees)", k+1, id))
			}
		}
		if len(why) > 0 {
			lines = append(lines, fmt.Sprintf("row %d (%s): %s, above a relevant chunk.", i+1, r.variant, strings.Join(why, "; ")))
		}
	}
	return lines
}

// labelAgreement counts the chunks of scored results whose verdict agrees
// with the author's relevance label, and the chunks judged.
func labelAgreement(results []result) (agree, judged int) {
	for _, r := range results {
		if !r.scored || len(r.verdicts) != len(r.chunkIDs) {
			continue
		}
		for k, v := range r.verdicts {
			judged++
			if v == slices.Contains(r.question.relevant, r.chunkIDs[k]) {
				agree++
			}
		}
	}
	return agree, judged
}

// inProcessJudgeNote explains judge_requests_total when every score came
// from builtin:lexical, which judges in the collector, without a request, in
// the call that brings the batch; "" otherwise. A call may spend 50 ms so
// (the processor's inline budget): the spans after that, on a loaded
// machine, go to the judge's workers, and those count as requests. lines are
// the scraped metrics.
func inProcessJudgeNote(results []result, lines []string) string {
	scored := 0
	for _, r := range results {
		if !r.scored {
			continue
		}
		if r.judge != builtinJudge {
			return ""
		}
		scored++
	}
	if scored == 0 {
		return ""
	}
	llm := "An LLM judge (e.g. openai:gpt-4o-mini) counts one request per chunk there\n" +
		"(one per span with judge.mode: batched), by outcome."
	if n := judgeRequests(lines); n > 0 {
		return fmt.Sprintf("%s judges inside the collector, without requests, for up to 50 ms of each batch; past that\n"+
			"(a loaded machine), the judge's workers took the rest: judge_requests_total counts their %d, while\n"+
			"scored_spans_total counts %d. %s", builtinJudge, n, scored, llm)
	}
	return fmt.Sprintf("%s judges inside the collector, without requests: judge_requests_total stays at 0 while\n"+
		"scored_spans_total counts %d. %s", builtinJudge, scored, llm)
}

// judgeRequests sums builtin:lexical's judge_requests_total for traffic over
// its outcomes, from the scraped lines.
func judgeRequests(lines []string) int {
	n := 0.0
	for _, l := range lines {
		name, value, ok := sample(l)
		if ok && strings.HasPrefix(name, "otelcol_processor_ragprecision_judge_requests_total{") &&
			label(name, "judge_model") == builtinJudge && label(name, "purpose") == "traffic" {
			n += value
		}
	}
	return int(n)
}

// builtinJudge is the offline judge examples/demo.yaml configures.
const builtinJudge = "builtin:lexical"

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

// The retrieval outcomes the processor writes on a span.
const (
	outcomeIdeal     = string(scoring.OutcomeIdeal)
	outcomeMisranked = string(scoring.OutcomeMisranked)
	outcomeMiss      = string(scoring.OutcomeMiss)
)

// variantScores is what the scored spans of one retriever version say.
type variantScores struct {
	name     string
	cp, ndcg scoring.Stats
	outcomes map[string]int
}

// summary is the comparison the demo is about: two retrievers ranking the
// same chunks.
type summary struct {
	variants         []*variantScores // best mean CP first
	scored, received int
}

func summarize(results []result) summary {
	var s summary
	byName := map[string]*variantScores{}
	for _, r := range results {
		if r.received {
			s.received++
		}
		if !r.scored {
			continue
		}
		s.scored++
		v := byName[r.variant]
		if v == nil {
			v = &variantScores{name: r.variant, outcomes: map[string]int{}}
			byName[r.variant] = v
			s.variants = append(s.variants, v)
		}
		v.cp.Add(r.score)
		if r.hasNDCG {
			v.ndcg.Add(r.ndcg)
		}
		v.outcomes[r.retrievalOutcome]++
	}
	slices.SortStableFunc(s.variants, func(a, b *variantScores) int {
		if c := cmp.Compare(b.cp.Mean(), a.cp.Mean()); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return s
}

// ranksBetter reports whether variant better has a higher mean CP than
// variant worse, both scored.
func ranksBetter(s summary, better, worse string) bool {
	var b, w *variantScores
	for _, v := range s.variants {
		switch v.name {
		case better:
			b = v
		case worse:
			w = v
		}
	}
	return b != nil && w != nil && b.cp.Mean() > w.cp.Mean()
}

// printComparison writes each variant's mean CP with its 95% interval and
// its outcomes, then how much better the best variant ranks than each
// other, with the interval of the difference.
func printComparison(w io.Writer, s summary) error {
	fmt.Fprintf(w, "Two retrievers, the same questions and chunks (%s, the variant label of the metrics):\n", variantAttribute)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    VARIANT\tSCORED\tMEAN CP ± 95% CI\tMEAN NDCG\tIDEAL\tMISRANKED\tMISS")
	for _, v := range s.variants {
		fmt.Fprintf(tw, "    %s\t%d\t%s\t%s\t%d\t%d\t%d\n", orDash(v.name), v.cp.Count(),
			plusMinus(v.cp.Mean(), v.cp.CI95()), meanOrDash(v.ndcg),
			v.outcomes[outcomeIdeal], v.outcomes[outcomeMisranked], v.outcomes[outcomeMiss])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.variants) < 2 {
		fmt.Fprintf(w, "Only %d variant scored: nothing to compare.\n", len(s.variants))
		return nil
	}
	best := s.variants[0]
	for _, v := range s.variants[1:] {
		d := scoring.Welch(v.cp, best.cp)
		if d.Significant() {
			fmt.Fprintf(w, "%s ranks better than %s: mean CP %s higher, 95%% CI %s (Welch's t, %.1f df).\n",
				best.name, v.name, plusMinus(d.Value, d.HalfWidth), interval(d), d.DF)
			fmt.Fprintln(w, "    "+diagnose(v, best))
		} else {
			fmt.Fprintf(w, "%s scores %s above %s, but the 95%% CI %s includes 0 (Welch's t, %.1f df): these scores cannot tell them apart.\n",
				best.name, plusMinus(d.Value, d.HalfWidth), v.name, interval(d), d.DF)
		}
	}
	fmt.Fprintf(w, "Small samples, %d and %d scores: the intervals use Student's t, not the normal 1.96, and are wide for it.\n"+
		"Welch's test takes the variants as independent samples, as a random split of live traffic is (here both\n"+
		"answered the same questions, which a paired test would exploit). On live traffic RAGVariantRegressed makes\n"+
		"this comparison over an hour, with at least 30 scores a variant.\n", best.cp.Count(), s.variants[len(s.variants)-1].cp.Count())
	return nil
}

// diagnose says what the worse variant gets wrong, from the outcomes that
// grew against the better one: more miss is retrieval, more misranked is
// ranking.
func diagnose(worse, better *variantScores) string {
	moreMiss := worse.outcomes[outcomeMiss] - better.outcomes[outcomeMiss]
	moreMisranked := worse.outcomes[outcomeMisranked] - better.outcomes[outcomeMisranked]
	switch {
	case moreMiss > 0 && moreMiss >= moreMisranked:
		return fmt.Sprintf("%s misses more (%d more retrievals without a relevant chunk): its index, chunking or embeddings lose documents.", worse.name, moreMiss)
	case moreMisranked > 0:
		return fmt.Sprintf("%s finds the relevant chunks but ranks them lower (%d more misranked): a reranker's job, not the index's.", worse.name, moreMisranked)
	default:
		return fmt.Sprintf("%s has no more miss or misranked retrievals than %s; its relevant chunks sit lower within them.", worse.name, better.name)
	}
}

// plusMinus renders a value and the half-width of its interval.
func plusMinus(value, halfWidth float64) string {
	if math.IsInf(halfWidth, 1) {
		return fmt.Sprintf("%.3f ± ? (one score)", value)
	}
	return fmt.Sprintf("%.3f ± %.3f", value, halfWidth)
}

// interval renders the ends of a difference's interval.
func interval(d scoring.Difference) string {
	if math.IsInf(d.HalfWidth, 1) {
		return "unbounded (a variant with one score)"
	}
	return fmt.Sprintf("%+.3f to %+.3f", d.Value-d.HalfWidth, d.Value+d.HalfWidth)
}

func meanOrDash(s scoring.Stats) string {
	if s.Count() == 0 {
		return "-"
	}
	return strconv.FormatFloat(s.Mean(), 'f', 3, 64)
}

// metricPrefixes are the metric families printed from the scrape: the
// histogram that dashboards and alerts use, the retrieval outcomes, and the
// processor's own counts.
var metricPrefixes = []string{
	"rag_contextual_precision",
	"rag_retrieval_outcome_total",
	"otelcol_processor_ragprecision_candidate_spans_total",
	"otelcol_processor_ragprecision_selected_spans_total",
	"otelcol_processor_ragprecision_scored_spans_total",
	"otelcol_processor_ragprecision_unscored_spans_total",
	"otelcol_processor_ragprecision_judge_requests_total",
	"otelcol_processor_ragprecision_canary_verdicts_total",
	"rag_sampling_percentage",
}

// samplingSummary says how spans were sampled, from the scraped lines:
// with adaptive_sampling, each series' current percentage
// (rag_sampling_percentage); with a fixed sampling_percentage, which has no
// such gauge, the candidates it selected.
func samplingSummary(lines []string) string {
	var adaptive []string
	var selected, candidates float64
	for _, l := range lines {
		name, value, ok := sample(l)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "rag_sampling_percentage{"):
			adaptive = append(adaptive, fmt.Sprintf("%s/%s %.3g%%", label(name, "service_name"), label(name, "data_source"), value))
		case strings.HasPrefix(name, "otelcol_processor_ragprecision_selected_spans_total"):
			selected += value
		case strings.HasPrefix(name, "otelcol_processor_ragprecision_candidate_spans_total"):
			candidates += value
		}
	}
	if len(adaptive) > 0 {
		slices.Sort(adaptive)
		return "Sampling: adaptive_sampling; the current percentage per service/data source: " + strings.Join(adaptive, ", ") + "."
	}
	return fmt.Sprintf("Sampling: a fixed sampling_percentage (adaptive_sampling is off): %.0f of %.0f candidate spans selected.", selected, candidates)
}

// sample splits an exposition line into its name with labels and value.
func sample(line string) (string, float64, bool) {
	if strings.HasPrefix(line, "#") {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	return line[:i], v, err == nil
}

// label is the value of a label in a sample's name, or "".
func label(name, key string) string {
	_, rest, ok := strings.Cut(name, key+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
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

// shownBucket is the one histogram bucket printed, the threshold's, which
// the alert expression the demo prints divides by the count: every series
// has a dozen buckets, too many lines for a terminal.
const shownBucket = `le="0.7"`

// filterMetrics keeps the lines of the families in metricPrefixes, of their
// histogram buckets only shownBucket.
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
		if strings.Contains(name, "_bucket{") && !strings.Contains(name, shownBucket) {
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
