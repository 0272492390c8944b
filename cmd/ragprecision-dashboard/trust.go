package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The recorded series of the drift canary and of the shadow judge.
const (
	canaryAccuracy6h = "judge_model_judge_version:ragprecision_canary:accuracy6h"
	canaryAccuracy1w = "judge_model_judge_version:ragprecision_canary:accuracy1w"
	canaryKappa6h    = "judge_model_judge_version:ragprecision_canary:kappa6h"
	canaryKappa1w    = "judge_model_judge_version:ragprecision_canary:kappa1w"
	canaryCPError6h  = "judge_model_judge_version:ragprecision_canary_cp_abs_error:mean6h"
	canaryCPError1w  = "judge_model_judge_version:ragprecision_canary_cp_abs_error:mean1w"
	canaryCells6h    = "judge_model_judge_version_label_verdict:otelcol_processor_ragprecision_canary_verdicts:increase6h"
	canaryRuns6h     = "job_instance_judge_model_outcome:otelcol_processor_ragprecision_canary_runs:increase6h"
	shadowAgree1h    = "judge_model_shadow_model:ragprecision_shadow:agreement1h"
	shadowAgree1d    = "judge_model_shadow_model:ragprecision_shadow:agreement1d"
	shadowKappa1h    = "judge_model_shadow_model:ragprecision_shadow:kappa1h"
	shadowKappa1d    = "judge_model_shadow_model:ragprecision_shadow:kappa1d"
	shadowVerdicts1d = "judge_model_shadow_model:otelcol_processor_ragprecision_shadow_verdicts:increase1d"
	cascadeSaved1d   = "judge_model_shadow_model:ragprecision_cascade_llm_verdicts:saved_share1d"
)

// judgeChangeWindow is how long a new judge_version stays marked: it is
// new while it has no sample in the hour before this window. The
// annotation's step must be shorter.
const judgeChangeWindow = "10m"

// judgeChanges marks the moment a judge_version starts scoring a data
// source (a changed model, mode, prompt, criteria or cascade setting): its
// scores are compared only with its own from then on.
func judgeChanges() *dashboard.AnnotationQueryBuilder {
	labels := "service_name, data_source, judge_model, judge_version"
	series := `rag_contextual_precision_count{` + sourceFilter + `}`
	expr := `group by (` + labels + `) (` + series + `)
  unless on (` + labels + `)
group by (` + labels + `) (last_over_time(` + series + `[1h] offset ` + judgeChangeWindow + `))`
	return dashboard.NewAnnotationQueryBuilder().
		Name("Judge changes").
		Datasource(datasource()).
		Enable(true).
		IconColor("purple").
		Target(prometheus.NewDataqueryBuilder().Expr(expr).Interval("5m").RefId("Anno")).
		TitleFormat("Judge change on {{data_source}}").
		TextFormat("{{judge_model}}, judge_version {{judge_version}}, starts scoring {{data_source}} ({{service_name}}): its scores are compared with its own from now on").
		TagKeys("judge_model,judge_version,data_source")
}

// The legends of the canary's series, per judge, and of the shadow's, per pair.
const (
	canaryLegend = "{{judge_model}} {{judge_version}}"
	shadowLegend = "{{judge_model}} vs {{shadow_model}}"
)

// recentAndLonger is a panel of a statistic over a recent window (solid) and
// a longer one (dashed, its legend ending in longerName).
func recentAndLonger(title, description, unit, legend, recent, longer, longerName string) *timeseries.PanelBuilder {
	return series(title, description, unit, query(recent, legend), query(longer, legend+" "+longerName)).
		OverrideByRegexp(".* "+longerName, []dashboard.DynamicConfigValue{dashed})
}

// trustRows are the rows that say whether the judge can be trusted: the
// drift canary against its labels, and the shadow judge beside the primary.
func trustRows(b *dashboard.DashboardBuilder) {
	j := `{` + judgeFilter + `}`
	b.WithRow(dashboard.NewRowBuilder("Is the judge still the same? Drift canary"))
	b.WithPanel(recentAndLonger("Canary agreement with its labels, last 6 hours and baseline week",
		"The share of the canary's verdicts that agree with the labels of judge.canary's file, over the last 6 hours (solid) and the week before them (dashed), per judge_model and judge_version. The canary re-judges the same labelled retrievals every interval without the verdict cache, so a fall is the judge's, not retrieval's: RAGJudgeDrifted fires when it falls significantly and by more than 0.04 below the same judge_version's week.",
		"percentunit", canaryLegend, canaryAccuracy6h+j, canaryAccuracy1w+j, "baseline",
	).Min(0).Max(1))
	b.WithPanel(recentAndLonger("Canary kappa, last 6 hours and baseline week",
		"Cohen's kappa of the canary's verdicts against its labels: agreement beyond what the shares of relevant labels and verdicts give by chance (1 perfect, 0 no better than chance: a judge answering at random, or calling everything relevant). The red line is RAGJudgeDrifted's floor, 0.4.",
		"none", canaryLegend, canaryKappa6h+j, canaryKappa1w+j, "baseline",
	).Min(0).Max(1).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Color: "red"}, {Value: ptr(0.4), Color: "transparent"}})).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed)))
	b.WithPanel(recentAndLonger("Canary CP error, last 6 hours and baseline week",
		"The mean over canary retrievals of |CP of the judge's verdicts − CP of the labels|: the error the judge puts into rag_contextual_precision, on retrievals whose truth is known.",
		"none", canaryLegend, canaryCPError6h+j, canaryCPError1w+j, "baseline",
	).Min(0))
	b.WithPanel(series("Canary runs by outcome, last 6 hours",
		"Canary runs that ended in the last 6 hours, per collector: ok, or failed (a retrieval of the run could not be judged). RAGJudgeCanaryFailing fires when more than half of a collector's failed.",
		"short",
		query(`sum by (instance, judge_model, outcome) (`+canaryRuns6h+j+`)`, "{{instance}} {{judge_model}} {{outcome}}"),
	).Min(0))
	b.WithPanel(table.NewPanelBuilder().
		Title("Canary confusion matrix, last 6 hours").
		Description("The canary's verdicts by their label and the judge's verdict. Many verdict=relevant on label=irrelevant: the judge turned lenient; many verdict=irrelevant on label=relevant: strict.").
		Datasource(datasource()).
		Height(8).Span(24).
		Decimals(0).
		WithTarget(instant(canaryCells6h+j, "").Format(prometheus.PromQueryFormatTable)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]bool{"Time": true},
			"renameByName":  map[string]string{"Value": "verdicts"},
		}}))

	b.WithRow(dashboard.NewRowBuilder("Would another judge agree? Shadow judge"))
	b.WithPanel(recentAndLonger("Shadow agreement with the primary, last hour and last day",
		"The share of the chunks both judged on which the shadow judge (shadow_judge, on its percentage of scored spans) gave the primary's verdict, over the last hour (solid) and the last day (dashed), per pair.",
		"percentunit", shadowLegend, shadowAgree1h+j, shadowAgree1d+j, "day",
	).Min(0).Max(1))
	b.WithPanel(recentAndLonger("Shadow kappa, last hour and last day",
		"Cohen's kappa of the primary's verdicts against the shadow's on the same chunks: agreement beyond chance, per pair.",
		"none", shadowLegend, shadowKappa1h+j, shadowKappa1d+j, "day",
	).Min(0).Max(1))
	b.WithPanel(series("Shadow spans by status",
		"Scored spans the shadow judge was asked to judge, per second: scored, or what stopped it (judge_error, timeout, budget, overflow, shutdown). Its failures never touch the primary score or the span's status.",
		"ops",
		query(`sum by (shadow_model, status) (rate(otelcol_processor_ragprecision_shadow_spans_total[$__rate_interval]))`, "{{shadow_model}} {{status}}"),
	).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)))
	b.WithPanel(table.NewPanelBuilder().
		Title("Cascade: LLM verdicts saved, beside agreement with its LLM alone, last day").
		Description("For a cascade primary whose shadow is its own LLM alone: the share of verdicts builtin:lexical decided (LLM requests saved), and what that costs in agreement with the LLM alone on the same chunks, on your own traffic.").
		Datasource(datasource()).
		Height(8).Span(12).
		Decimals(3).
		WithTarget(instant(cascadeSaved1d+j, "").Format(prometheus.PromQueryFormatTable).RefId("A")).
		WithTarget(instant(shadowAgree1d+j+` and on (judge_model, shadow_model) `+cascadeSaved1d, "").Format(prometheus.PromQueryFormatTable).RefId("B")).
		WithTarget(instant(shadowKappa1d+j+` and on (judge_model, shadow_model) `+cascadeSaved1d, "").Format(prometheus.PromQueryFormatTable).RefId("C")).
		WithTarget(instant(shadowVerdicts1d+j+` and on (judge_model, shadow_model) `+cascadeSaved1d, "").Format(prometheus.PromQueryFormatTable).RefId("D")).
		OverrideByName("chunks both judged", []dashboard.DynamicConfigValue{{Id: "decimals", Value: 0}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]bool{"Time": true},
			"renameByName": map[string]string{
				"Value #A": "LLM verdicts saved", "Value #B": "agreement with the LLM alone",
				"Value #C": "kappa", "Value #D": "chunks both judged",
			},
		}}))
}
