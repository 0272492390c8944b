package main

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/ragprecision/ragprecision/scoring"
)

// The recorded series of the retrieval diagnostics and of the variants.
const (
	ndcg1h          = "service_data_source:rag_retrieval_ndcg:mean1h"
	ndcg1w          = "service_data_source:rag_retrieval_ndcg:mean1w"
	reciprocal1h    = "service_data_source:rag_retrieval_reciprocal_rank:mean1h"
	reciprocal1w    = "service_data_source:rag_retrieval_reciprocal_rank:mean1w"
	rerankLift1h    = "service_data_source:rag_rerank_lift:mean1h"
	outcomeShare1h  = "service_data_source_outcome:rag_retrieval_outcome:share1h"
	outcomeChange1h = "service_data_source_outcome:rag_retrieval_outcome:share_change1h"
	rankShare1h     = "service_data_source_rank:rag_retrieval_chunks_relevant:share1h"
	rankCumulative  = "service_data_source_rank:rag_retrieval_chunks_relevant:cumulative_share1h"
	rankRatio1h     = "service_data_source_rank:rag_retrieval_chunks:relevant_ratio1h"
	depth1h         = "service_data_source:rag_retrieval_depth:recommended1h"
	depth1w         = "service_data_source:rag_retrieval_depth:recommended1w"
	variantMean1h   = "service_data_source_variant:rag_contextual_precision:mean1h"
	variantHalf1h   = "service_data_source_variant:rag_contextual_precision:ci95_halfwidth1h"
	variantCount1h  = "service_data_source_variant:rag_contextual_precision_count:increase1h"
	variantMean1d   = "service_data_source_variant:rag_contextual_precision:mean1d"
	variantHalf1d   = "service_data_source_variant:rag_contextual_precision:ci95_halfwidth1d"
	variantCount1d  = "service_data_source_variant:rag_contextual_precision_count:increase1d"
	variantOutcome  = "service_data_source_variant_outcome:rag_retrieval_outcome:share1h"
)

// outcomeColors are the outcomes' colours, from good to bad.
var outcomeColors = map[scoring.Outcome]string{
	scoring.OutcomeIdeal: "green", scoring.OutcomeMisranked: "orange", scoring.OutcomeMiss: "red",
}

func fixedColor(c string) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": c}}
}

// dashed is the style of a baseline, or of a band's edges.
var dashed = dashboard.DynamicConfigValue{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}}

// named gives the series without a variant label (spans without the
// attribute, or no attributes.variant at all) the variant "(none)", so that
// they have a legend.
func named(expr string) string {
	return `label_replace(` + expr + `, "variant", "(none)", "variant", "")`
}

func instant(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(datasource()).Expr(expr).LegendFormat(legend).Instant()
}

// tableQuery is an instant query of a table panel, its columns named by
// refID ("Value #A").
func tableQuery(refID, expr string) *prometheus.DataqueryBuilder {
	return instant(named(ofCurrentJudge(expr)), "").Format(prometheus.PromQueryFormatTable).RefId(refID)
}

// byRank is one instant query per rank label, in rank order: a bar per rank.
func byRank(p *bargauge.PanelBuilder, series string) *bargauge.PanelBuilder {
	for _, r := range scoring.RankLabels {
		p.WithTarget(instant(ofCurrentJudge(fmt.Sprintf(`%s{%s, rank=%q}`, series, sourceFilter, r)), r))
	}
	return p
}

func rankBars(title, description string) *bargauge.PanelBuilder {
	return bargauge.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("percentunit").Min(0).Max(1).
		Height(8).Span(7).
		Orientation(common.VizOrientationVertical).
		DisplayMode(common.BarGaugeDisplayModeBasic)
}

// diagnosticRows are the rows that say what to do about retrieval quality,
// each repeated for every data source of the chosen service.
func diagnosticRows(b *dashboard.DashboardBuilder) {
	f := `{` + sourceFilter + `}`

	b.WithRow(dashboard.NewRowBuilder("Ranking measures: $data_source").Repeat("data_source"))
	b.WithPanel(series("Mean CP, nDCG and reciprocal rank, last hour and baseline",
		"The hour's means (solid) and the baseline week's (dashed) of Contextual Precision and of the standard ranking measures, computed from the same verdicts: binary nDCG over the judged chunks, and the reciprocal rank of the first relevant chunk (1 when it is on top, 1/3 when third, 0 when none is relevant).",
		"percentunit",
		query(ofCurrentJudge(mean1h+f), "CP"),
		query(ofCurrentJudge(ndcg1h+f), "nDCG"),
		query(ofCurrentJudge(reciprocal1h+f), "reciprocal rank"),
		query(ofCurrentJudge(mean1w+f), "CP baseline"),
		query(ofCurrentJudge(ndcg1w+f), "nDCG baseline"),
		query(ofCurrentJudge(reciprocal1w+f), "reciprocal rank baseline"),
	).Span(24).Min(0).Max(1).
		OverrideByRegexp(".* baseline", []dashboard.DynamicConfigValue{dashed}))
	b.WithPanel(series("Does my reranker help: mean lift, last hour",
		"For rerank spans that carry the reranker's input ranking as well as its output (OpenInference RERANKER, Cohere rerank): the hour's mean of the output's CP minus the input's, the input cut to the depth the reranker returns, from the same verdicts. Above 0 the reranker moves relevant documents up, by that much CP; below 0 it moves them down and does harm; near 0 it costs latency for nothing. No data: this data source has no such spans. docs/OPERATING.md says what to do.",
		"none",
		query(ofCurrentJudge(rerankLift1h+f), "lift"),
	).Span(24).Min(-1).Max(1).Decimals(2).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Color: "red"}, {Value: ptr(0.0), Color: "green"}})).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))

	b.WithRow(dashboard.NewRowBuilder("Why it got worse: retrieval outcomes of $data_source").Repeat("data_source"))
	shares := series("Retrieval outcomes, last hour",
		"Share of the hour's scored retrievals by outcome. ideal: every relevant chunk ranks above every irrelevant one. misranked: relevant chunks were retrieved but some rank below irrelevant ones; add a reranker or fix the one in place. miss: not one relevant chunk; reranking cannot help, look at the index (missing or stale documents), chunking, embeddings and query rewriting.",
		"percentunit",
		query(ofCurrentJudge(outcomeShare1h+f), "{{outcome}}"),
	).Min(0).Max(1).FillOpacity(60).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
	changes := series("Change of each outcome's share since the baseline week",
		"The hour's share of each outcome minus the baseline week's. When the precision-drop alert fires, its description names the one of miss and misranked that grew most, and the first step for it.",
		"percentunit",
		query(ofCurrentJudge(outcomeChange1h+f), "{{outcome}}"),
	)
	for _, o := range scoring.Outcomes {
		shares.OverrideByName(string(o), []dashboard.DynamicConfigValue{fixedColor(outcomeColors[o])})
		changes.OverrideByName(string(o), []dashboard.DynamicConfigValue{fixedColor(outcomeColors[o])})
	}
	b.WithPanel(shares)
	b.WithPanel(changes)

	b.WithRow(dashboard.NewRowBuilder("How deep to retrieve: rank profile of $data_source").Repeat("data_source"))
	deeperThan10 := dashboard.ValueMapping{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{"11": {Text: ptr("11+")}}}}
	b.WithPanel(stat.NewPanelBuilder().
		Title("Recommended retrieval depth").
		Description("The smallest rank that holds 95% of the relevant chunks judged (from at least 100), over the last hour and over the baseline week. Set the retriever's top-k to it; 11+ means more than 5% of the relevant chunks are below rank 10: keep the depth you have. It can only recommend less than the retriever returns now: try a larger depth for a while to see whether relevant chunks lie deeper. docs/OPERATING.md says how to read it.").
		Datasource(datasource()).
		Unit("none").Decimals(0).
		Height(8).Span(4).
		Mappings([]dashboard.ValueMapping{deeperThan10}).
		WithTarget(query(ofCurrentJudge(depth1h+f), "last hour")).
		WithTarget(query(ofCurrentJudge(depth1w+f), "baseline week")))
	b.WithPanel(byRank(rankBars("Where the relevant chunks are: share by rank, last hour",
		"Of the hour's relevant chunks, the share found at each rank (11+: below rank 10). A profile that falls to nothing after rank 4 says the chunks retrieved beyond it only fill the model's context."), rankShare1h))
	b.WithPanel(byRank(rankBars("Relevant chunks at or above each rank, with the recommended depth",
		"The share of the hour's relevant chunks found at each rank or above, at the ranks judged. The bars turn green at 95%: the first green bar is the recommended depth.").
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Color: "blue"}, {Value: ptr(0.95), Color: "green"}})).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdThresholds)), rankCumulative))
	b.WithPanel(byRank(rankBars("How often a chunk at each rank is relevant, last hour",
		"Relevant chunks / chunks judged at each rank: the precision of each position. It should fall with the rank; a flat profile means the ranking adds little over chance.").Span(6), rankRatio1h))

	b.WithRow(dashboard.NewRowBuilder("Which retriever is better: variants of $data_source").Repeat("data_source"))
	b.WithPanel(series("Mean CP by variant, last hour, with 95% bands",
		"Each variant's mean CP over the last hour (solid) and the edges of its 95% confidence band (dashed), from attributes.variant. RAGVariantRegressed fires when a variant is below the best one by more than both bands together allow, for an hour. (none): spans without the attribute, never compared.",
		"percentunit",
		query(named(ofCurrentJudge(variantMean1h+f)), "{{variant}}"),
		query(named(ofCurrentJudge(variantMean1h+f+` - `+variantHalf1h+f)), "{{variant}} lower"),
		query(named(ofCurrentJudge(variantMean1h+f+` + `+variantHalf1h+f)), "{{variant}} upper"),
	).Min(0).Max(1).
		OverrideByRegexp(".* (lower|upper)", []dashboard.DynamicConfigValue{dashed, {Id: "custom.lineWidth", Value: 1}}))
	b.WithPanel(table.NewPanelBuilder().
		Title("Variants now: mean CP and 95% interval, last hour and last day").
		Description("Each variant's mean, the half-width of its 95% interval and its scores, over the last hour (what the alert compares) and the last day (where a low-traffic rollout separates first). Two variants differ when their means are further apart than the square root of the sum of their squared half-widths.").
		Datasource(datasource()).
		Height(8).Span(12).
		Decimals(3).
		WithTarget(tableQuery("A", variantMean1h+f)).
		WithTarget(tableQuery("B", variantHalf1h+f)).
		WithTarget(tableQuery("C", variantCount1h+f)).
		WithTarget(tableQuery("D", variantMean1d+f)).
		WithTarget(tableQuery("E", variantHalf1d+f)).
		WithTarget(tableQuery("F", variantCount1d+f)).
		OverrideByRegexp("scores, .*", []dashboard.DynamicConfigValue{{Id: "decimals", Value: 0}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]bool{"Time": true, "service_name": true, "data_source": true, "judge_version": true},
			"renameByName": map[string]string{
				"Value #A": "mean, hour", "Value #B": "± 95%, hour", "Value #C": "scores, hour",
				"Value #D": "mean, day", "Value #E": "± 95%, day", "Value #F": "scores, day",
			},
		}}))
	b.WithPanel(series("Outcome shares by variant, last hour",
		"Each variant's share of ideal, misranked and miss retrievals. A variant that misses more loses documents (its index, chunking or embeddings); one that misranks more ranks them worse (its reranker or scoring).",
		"percentunit",
		query(named(ofCurrentJudge(variantOutcome+f)), "{{variant}} {{outcome}}"),
	).Min(0).Max(1))
	b.WithPanel(series("Mean CP by variant, last day, with 95% bands",
		"As the hour's panel, over the last day: more scores, narrower bands, and a slower response.",
		"percentunit",
		query(named(ofCurrentJudge(variantMean1d+f)), "{{variant}}"),
		query(named(ofCurrentJudge(variantMean1d+f+` - `+variantHalf1d+f)), "{{variant}} lower"),
		query(named(ofCurrentJudge(variantMean1d+f+` + `+variantHalf1d+f)), "{{variant}} upper"),
	).Min(0).Max(1).
		OverrideByRegexp(".* (lower|upper)", []dashboard.DynamicConfigValue{dashed, {Id: "custom.lineWidth", Value: 1}}))
}

func ptr[T any](v T) *T { return &v }
