package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Label filters every query applies; the variables are defined below.
const (
	sourceFilter = `service_name=~"$service_name", data_source=~"$data_source"`
	judgeFilter  = `judge_model=~"$judge_model"`
)

// The recorded series of deploy/prometheus/ragprecision.rules.yml that the
// dashboard reads: what it shows is what the alerts see.
const (
	mean1h       = "service_data_source:rag_contextual_precision:mean1h"
	halfWidth1h  = "service_data_source:rag_contextual_precision:ci95_halfwidth1h"
	mean1w       = "service_data_source:rag_contextual_precision:mean1w"
	halfWidth1w  = "service_data_source:rag_contextual_precision:ci95_halfwidth1w"
	count1h      = "service_data_source:rag_contextual_precision_count:increase1h"
	passShare1h  = "service_data_source:rag_contextual_precision:pass_share1h"
	stddev1w     = "service_data_source:rag_contextual_precision:stddev1w"
	current      = "service_data_source:ragprecision_sampling_percentage:current1h"
	recommended  = "service_data_source:ragprecision_sampling_percentage:recommended1h"
	needed       = "service_data_source:ragprecision_samples_needed:1h"
	costPerHour  = "judge_model_purpose_currency:ragprecision_judge_cost:per_hour"
	costPerSpan  = "judge_model_currency:ragprecision_judge_cost:per_judged_span1h"
	currentJudge = "service_data_source:ragprecision_judge_version:current1h"
)

// ofCurrentJudge keeps a per-judge_version statistic of the judge that
// scored most of each data source's last hour, so that a panel shows one
// series per data source across a judge change (which the annotations
// mark), never two judges' scores side by side or summed.
func ofCurrentJudge(expr string) string {
	return `(` + expr + `) and on (service_name, data_source, judge_version) ` + currentJudge + `{` + sourceFilter + `}`
}

func datasource() common.DataSourceRef {
	t, uid := "prometheus", "${datasource}"
	return common.DataSourceRef{Type: &t, Uid: &uid}
}

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(datasource()).Expr(expr).LegendFormat(legend).Range()
}

func series(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit(unit).
		Height(8).Span(12).
		FillOpacity(10).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true))
	for _, t := range targets {
		p.WithTarget(t)
	}
	return p
}

func single(title, description, unit string, target *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit(unit).
		Height(4).Span(6).
		WithTarget(target)
}

// variable is a query variable; multi lets several values be chosen, or All.
func variable(name, label, query string, multi bool) *dashboard.QueryVariableBuilder {
	q := query
	v := dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: &q}).
		Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
	if multi {
		v.Multi(true).IncludeAll(true).AllValue(".*")
	}
	return v
}

// build is the ragprecision dashboard.
func build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("RAG retrieval quality (ragprecision)").
		Uid("ragprecision").
		Description("Contextual Precision of RAG retrievals scored by the ragprecision processor, what to do about it (retrieval outcomes, the rank profile, variants side by side), its judge and sampling, and whether the judge can be trusted (the drift canary, the shadow judge; judge changes are annotated). Reads the metrics of the collector's telemetry endpoint and the recording rules of deploy/prometheus/ragprecision.rules.yml. How to read it: docs/OPERATING.md.").
		Tags([]string{"ragprecision", "rag", "opentelemetry-collector"}).
		Refresh("1m").
		Time("now-6h", "now").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Annotation(judgeChanges()).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(variable("service_name", "Service", "label_values(rag_contextual_precision_count, service_name)", false)).
		WithVariable(variable("data_source", "Data source", `label_values(rag_contextual_precision_count{service_name=~"$service_name"}, data_source)`, true)).
		WithVariable(variable("judge_model", "Judge", "label_values(otelcol_processor_ragprecision_judge_requests_total, judge_model)", true))

	// Retrieval quality, one row of panels per data source of the chosen
	// service, so that each band panel holds one mean and its band.
	b.WithRow(dashboard.NewRowBuilder("Retrieval quality: $data_source").Repeat("data_source"))
	b.WithPanel(series("Mean Contextual Precision, last hour, with its 95% band",
		"Mean CP of the scores of the last hour (solid), the band the true mean lies in with 95% confidence, and the baseline: the mean of the week before the last hour (dashed), all of the judge_version that scored most of the hour. The precision-drop alert fires when the hour is below the baseline by more than both bands together allow. A new judge has no baseline for its first hour: the dashed line resumes from its own scores.",
		"percentunit",
		query(ofCurrentJudge(mean1h+`{`+sourceFilter+`}`), "mean"),
		query(ofCurrentJudge(mean1h+`{`+sourceFilter+`} - `+halfWidth1h+`{`+sourceFilter+`}`), "lower"),
		query(ofCurrentJudge(mean1h+`{`+sourceFilter+`} + `+halfWidth1h+`{`+sourceFilter+`}`), "upper"),
		query(ofCurrentJudge(mean1w+`{`+sourceFilter+`}`), "baseline"),
	).
		Min(0).Max(1).
		OverrideByName("upper", []dashboard.DynamicConfigValue{
			{Id: "custom.fillBelowTo", Value: "lower"},
			{Id: "custom.lineWidth", Value: 0},
			{Id: "custom.fillOpacity", Value: 20},
		}).
		OverrideByName("lower", []dashboard.DynamicConfigValue{
			{Id: "custom.lineWidth", Value: 0},
			{Id: "custom.fillOpacity", Value: 0},
		}).
		OverrideByName("baseline", []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		}))
	b.WithPanel(heatmap.NewPanelBuilder().
		Title("Score distribution").
		Description("How many retrievals scored in each tenth of Contextual Precision. A drop of the mean that is every retrieval a little worse looks different from one that is some retrievals much worse. The dots are exemplars: click one to open the trace of a scored span (needs the exemplar configuration of docs/OPERATING.md).").
		Datasource(datasource()).
		Height(8).Span(12).
		Calculate(false).
		WithTarget(prometheus.NewDataqueryBuilder().
			Datasource(datasource()).
			Expr(`sum by (le) (increase(rag_contextual_precision_bucket{` + sourceFilter + `}[$__rate_interval]))`).
			LegendFormat("{{le}}").
			Format(prometheus.PromQueryFormatHeatmap).
			Exemplar(true).
			Range()).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit("percentunit")).
		CellValues(heatmap.NewCellValuesBuilder().Unit("short")))
	b.WithPanel(series("Share of retrievals above the threshold",
		"Share of the last hour's scores above the rules' threshold bucket (le=\"0.7\" for the default threshold 0.7), and how many scores the hour holds. RAGRetrievalsFailingThreshold fires when significantly fewer than half pass.",
		"percentunit",
		query(passShare1h+`{`+sourceFilter+`}`, "{{data_source}} pass share"),
	).Min(0).Max(1))
	b.WithPanel(series("Scores per hour and spread",
		"Scores in the last hour per judge_version (left; two during a judge change) and the standard deviation of the current judge's scores over the baseline week (right), the two numbers the confidence band and the recommended sampling percentage come from.",
		"short",
		query(count1h+`{`+sourceFilter+`}`, "{{data_source}} scores in the last hour, judge_version {{judge_version}}"),
		query(ofCurrentJudge(stddev1w+`{`+sourceFilter+`}`), "{{data_source}} standard deviation"),
	).OverrideByRegexp(".* standard deviation", []dashboard.DynamicConfigValue{
		{Id: "custom.axisPlacement", Value: "right"},
		{Id: "unit", Value: "none"},
	}))

	// What to do about it: outcomes, the rank profile, variants.
	diagnosticRows(b)

	// Sampling: what is spent, what is needed.
	b.WithRow(dashboard.NewRowBuilder("Sampling and spans"))
	b.WithPanel(series("Sampling percentage: current and recommended",
		"Current: selected / candidate spans over the last hour. Recommended: the percentage whose scores give the hour's mean a 95% half-width of 0.05 (the size of drop the alert can see within the hour), from the baseline's spread and the last hour's candidates, allowing for selected spans that go unscored; capped at 100. Set sampling_percentage to it; see docs/OPERATING.md for another target.",
		"percent",
		query(current+`{`+sourceFilter+`}`, "{{data_source}} current"),
		query(recommended+`{`+sourceFilter+`}`, "{{data_source}} recommended"),
	).Min(0))
	b.WithPanel(series("Adaptive sampling: each data source's percentage and the recommended one",
		"With adaptive_sampling on: the percentage the controller has chosen for each data source now (rag_sampling_percentage), beside the percentage recommended for a 95% half-width of 0.05 on the hour's mean. A rare data source sits above its recommendation when min_judged_per_hour asks for more; a busy one below it when the spend cannot pay for it. Empty with a fixed sampling_percentage. See docs/OPERATING.md, adaptive sampling.",
		"percent",
		query(`max by (service_name, data_source) (rag_sampling_percentage{`+sourceFilter+`})`, "{{data_source}} adaptive"),
		query(recommended+`{`+sourceFilter+`}`, "{{data_source}} recommended"),
	).Min(0))
	b.WithPanel(series("Spans seen, selected and scored",
		"Retrieval spans recognised (candidates), selected by sampling_percentage, and scored, per second.",
		"ops",
		query(`sum by (data_source) (rate(otelcol_processor_ragprecision_candidate_spans_total{`+sourceFilter+`}[$__rate_interval]))`, "{{data_source}} candidates"),
		query(`sum by (data_source) (rate(otelcol_processor_ragprecision_selected_spans_total{`+sourceFilter+`}[$__rate_interval]))`, "{{data_source}} selected"),
		query(`sum by (data_source) (rate(otelcol_processor_ragprecision_scored_spans_total{`+sourceFilter+`}[$__rate_interval]))`, "{{data_source}} scored"),
	))
	b.WithPanel(series("Selected spans left unscored, by status and reason",
		"Selected spans forwarded without a score, per second. no_chunks, no_reference, too_large: the span's content; judge_error (with the failure's reason), timeout: the judge; budget: judge.max_requests_per_second; overflow (reason max_pending_spans, max_pending_bytes, judge_capacity): the processor's holding limits; shutdown: spans held when the collector stopped.",
		"ops",
		query(`sum by (status, reason) (rate(otelcol_processor_ragprecision_unscored_spans_total[$__rate_interval]))`, "{{status}} {{reason}}"),
	).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)))
	b.WithPanel(single("Scores an hour needs",
		"Scores per hour for a 95% half-width of 0.05 on the hour's mean: (1.96 · standard deviation / 0.05)².",
		"short",
		query(needed+`{`+sourceFilter+`}`, "{{data_source}}")))
	b.WithPanel(single("Judge cost per judged span",
		"What one scored span cost the judge over the last hour (needs judge.pricing), traffic requests only: the canary and a shadow judge cost the same whatever the sampling. Multiply by the scores an hour needs for the cost of the recommended rate.",
		"none",
		query(costPerSpan+`{`+judgeFilter+`}`, "{{judge_model}} {{currency}}")))

	// The judge.
	b.WithRow(dashboard.NewRowBuilder("Judge"))
	b.WithPanel(series("Judge requests by purpose and outcome",
		"Requests to each judge per second, by purpose (traffic: scoring spans; canary: the drift canary; shadow: the shadow judge, under its own judge_model) and outcome: ok, retry (failed, tried again), error (failed for good: a traffic span goes unscored with status judge_error), cancelled; with the failure's reason.",
		"reqps",
		query(`sum by (judge_model, purpose, outcome, reason) (rate(otelcol_processor_ragprecision_judge_requests_total{`+judgeFilter+`}[$__rate_interval]))`, "{{judge_model}} {{purpose}} {{outcome}} {{reason}}"),
	))
	b.WithPanel(series("Judge latency",
		"Median and 95th percentile of the judge's request latency.",
		"s",
		query(`histogram_quantile(0.5, sum by (judge_model, le) (rate(otelcol_processor_ragprecision_judge_latency_seconds_bucket{`+judgeFilter+`}[$__rate_interval])))`, "{{judge_model}} p50"),
		query(`histogram_quantile(0.95, sum by (judge_model, le) (rate(otelcol_processor_ragprecision_judge_latency_seconds_bucket{`+judgeFilter+`}[$__rate_interval])))`, "{{judge_model}} p95"),
	))
	b.WithPanel(series("Judge tokens per hour by purpose",
		"Prompt and completion tokens each judge reported, per hour, by purpose: traffic, canary, shadow.",
		"short",
		query(`sum by (judge_model, purpose, type) (rate(otelcol_processor_ragprecision_judge_tokens_total{`+judgeFilter+`}[$__rate_interval])) * 3600`, "{{judge_model}} {{purpose}} {{type}}"),
	))
	b.WithPanel(series("Judge cost per hour by purpose",
		"What each judge's tokens cost per hour at its pricing, over the last hour, by purpose: traffic (what sampling_percentage costs), canary (judge.canary: max_retrievals per interval, the same on every collector) and shadow (shadow_judge, under its own judge_model), stacked.",
		"none",
		query(costPerHour+`{`+judgeFilter+`}`, "{{judge_model}} {{purpose}} {{currency}}"),
	).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)))
	b.WithPanel(series("Verdict cache hit ratio",
		"Share of chunk verdicts served without a request of their own: from the verdict cache, or from an identical request in flight.",
		"percentunit",
		query(`sum by (judge_model) (rate(otelcol_processor_ragprecision_verdict_cache_hits_total{`+judgeFilter+`}[$__rate_interval]))
  / (
    sum by (judge_model) (rate(otelcol_processor_ragprecision_verdict_cache_hits_total{`+judgeFilter+`}[$__rate_interval]))
      + sum by (judge_model) (rate(otelcol_processor_ragprecision_verdict_cache_misses_total{`+judgeFilter+`}[$__rate_interval]))
  )`, "{{judge_model}}"),
	).Min(0).Max(1))
	b.WithPanel(series("Judge up",
		"1 while the judge answers, 0 while the processor's health breaker is open after repeated failures (RAGJudgeDown), per collector.",
		"none",
		query(`min by (instance, judge_model) (otelcol_processor_ragprecision_judge_up{`+judgeFilter+`})`, "{{instance}} {{judge_model}}"),
	).Min(0).Max(1))

	// Whether the judge can be trusted: the canary and the shadow judge.
	trustRows(b)

	// The processor itself.
	b.WithRow(dashboard.NewRowBuilder("Processor"))
	b.WithPanel(series("Held spans",
		"Selected spans held for judging now, per collector. At max_pending_spans selected spans pass unscored with status overflow.",
		"short",
		query(`max by (instance) (otelcol_processor_ragprecision_held_spans)`, "{{instance}}"),
	))
	b.WithPanel(series("Dropped spans and folded series",
		"Held spans lost (refused permanently by the next consumer, or still held at shutdown) and spans recorded under \"other\" because max_series was reached, per second.",
		"ops",
		query(`sum by (instance, reason) (rate(otelcol_processor_ragprecision_dropped_spans_total[$__rate_interval]))`, "{{instance}} dropped {{reason}}"),
		query(`sum by (instance) (rate(otelcol_processor_ragprecision_series_folded_total[$__rate_interval]))`, "{{instance}} folded"),
	))
	return b.Build()
}
