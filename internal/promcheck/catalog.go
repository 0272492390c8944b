package promcheck

import (
	"slices"
	"sort"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

// Family is a metric family the collector exports on its Prometheus
// endpoint, as processor/ragprecisionprocessor/telemetry.go defines it.
type Family struct {
	Name string
	// Histogram families are queried as _bucket (with le), _sum and _count.
	Histogram bool
	Labels    []string
	// Values lists, for labels with a closed set of values, every value the
	// processor records.
	Values map[string][]string
	// Buckets are a histogram's upper bounds (le), +Inf aside.
	Buckets []float64
}

// TargetLabels are added by Prometheus to every scraped series.
var TargetLabels = []string{"job", "instance"}

var (
	// productLabels are the labels of every rag_* metric; variant is set
	// only when attributes.variant is configured.
	productLabels = []string{"service_name", "data_source", "reference_source", "judge_model", "variant"}
	sourceLabels  = []string{"service_name", "data_source"}
	// scoreBuckets are the upper bounds of the histograms of scores in [0, 1].
	scoreBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

	// UnscoredStatuses are the statuses of selected spans forwarded without
	// a score (README "Output on spans"); all exist from the start, at 0.
	UnscoredStatuses = []string{"no_chunks", "no_reference", "too_large", "judge_error", "timeout", "budget", "overflow", "shutdown"}
	// OverflowReasons are the reasons of status overflow.
	OverflowReasons = []string{"max_pending_spans", "max_pending_bytes", "judge_capacity"}
	// DropReasons are the reasons of dropped spans; both exist from the
	// start, at 0.
	DropReasons = []string{"refused", "shutdown"}
)

func judgeReasons() []string {
	var out []string
	for _, r := range judge.Reasons {
		out = append(out, string(r))
	}
	return out
}

func retrievalOutcomes() []string {
	var out []string
	for _, o := range scoring.Outcomes {
		out = append(out, string(o))
	}
	return out
}

func judgeOutcomes() []string {
	var out []string
	for _, o := range judge.Outcomes {
		out = append(out, string(o))
	}
	return out
}

// Catalog lists every metric family of the ragprecision processor. The
// end-to-end test holds it against a live scrape of the built collector, so
// it cannot drift from the code.
func Catalog() []Family {
	return []Family{
		{Name: "rag_contextual_precision", Histogram: true, Labels: productLabels, Buckets: scoreBuckets},
		{Name: "rag_contextual_precision_squares_total", Labels: productLabels},
		{Name: "rag_retrieval_outcome_total", Labels: append(slices.Clone(productLabels), "outcome"),
			Values: map[string][]string{"outcome": retrievalOutcomes()}},
		{Name: "rag_retrieval_ndcg", Histogram: true, Labels: productLabels, Buckets: scoreBuckets},
		{Name: "rag_retrieval_reciprocal_rank", Histogram: true, Labels: productLabels, Buckets: scoreBuckets},
		{Name: "rag_retrieval_chunks_judged_total", Labels: append(slices.Clone(productLabels), "rank"),
			Values: map[string][]string{"rank": scoring.RankLabels}},
		{Name: "rag_retrieval_chunks_relevant_total", Labels: append(slices.Clone(productLabels), "rank"),
			Values: map[string][]string{"rank": scoring.RankLabels}},
		{Name: "otelcol_processor_ragprecision_candidate_spans_total", Labels: sourceLabels},
		{Name: "otelcol_processor_ragprecision_selected_spans_total", Labels: sourceLabels},
		{Name: "otelcol_processor_ragprecision_scored_spans_total", Labels: sourceLabels},
		{Name: "otelcol_processor_ragprecision_passed_spans_total", Labels: sourceLabels},
		{Name: "otelcol_processor_ragprecision_unscored_spans_total", Labels: []string{"status", "reason"},
			Values: map[string][]string{"status": UnscoredStatuses, "reason": append(judgeReasons(), OverflowReasons...)}},
		{Name: "otelcol_processor_ragprecision_judge_requests_total", Labels: []string{"judge_model", "outcome", "reason"},
			Values: map[string][]string{"outcome": judgeOutcomes(), "reason": judgeReasons()}},
		{Name: "otelcol_processor_ragprecision_judge_latency_seconds", Histogram: true, Labels: []string{"judge_model"},
			Buckets: []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}},
		{Name: "otelcol_processor_ragprecision_judge_tokens_total", Labels: []string{"judge_model", "type"},
			Values: map[string][]string{"type": {"prompt", "completion"}}},
		{Name: "otelcol_processor_ragprecision_judge_cost_total", Labels: []string{"judge_model", "currency"}},
		{Name: "otelcol_processor_ragprecision_verdict_cache_hits_total", Labels: []string{"judge_model"}},
		{Name: "otelcol_processor_ragprecision_verdict_cache_misses_total", Labels: []string{"judge_model"}},
		{Name: "otelcol_processor_ragprecision_judge_up", Labels: []string{"judge_model"}},
		{Name: "otelcol_processor_ragprecision_held_spans"},
		{Name: "otelcol_processor_ragprecision_held_bytes"},
		{Name: "otelcol_processor_ragprecision_max_pending_spans"},
		{Name: "otelcol_processor_ragprecision_max_pending_bytes"},
		{Name: "otelcol_processor_ragprecision_dropped_spans_total", Labels: []string{"reason"},
			Values: map[string][]string{"reason": DropReasons}},
		{Name: "otelcol_processor_ragprecision_series_folded_total"},
		{Name: "otelcol_processor_ragprecision_verdicts_total", Labels: []string{"judge_model", "stage", "relevant"},
			Values: map[string][]string{"relevant": {"true", "false"}}},
		{Name: "otelcol_processor_ragprecision_trace_answers"},
		{Name: "otelcol_processor_ragprecision_trace_answers_evicted_total"},
	}
}

// seriesInfo is what a queryable series name may carry.
type seriesInfo struct {
	labels  map[string]bool
	values  map[string][]string
	buckets []float64 // of a _bucket series
}

// Metrics maps every queryable series name (histograms expanded into
// _bucket, _sum and _count) to its labels, target labels included.
type Metrics map[string]seriesInfo

// Exported is the series names of Catalog.
func Exported() Metrics {
	m := Metrics{}
	for _, f := range Catalog() {
		names := []string{f.Name}
		if f.Histogram {
			names = []string{f.Name + "_bucket", f.Name + "_sum", f.Name + "_count"}
		}
		for _, n := range names {
			info := seriesInfo{labels: map[string]bool{}, values: f.Values}
			for _, l := range append(append([]string{}, f.Labels...), TargetLabels...) {
				info.labels[l] = true
			}
			if n == f.Name+"_bucket" {
				info.labels["le"] = true
				info.buckets = f.Buckets
			}
			m[n] = info
		}
	}
	return m
}

// Names lists the series names, sorted.
func (m Metrics) Names() []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Labels lists a series name's labels, sorted.
func (m Metrics) Labels(name string) []string {
	var out []string
	for l := range m[name].labels {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}
