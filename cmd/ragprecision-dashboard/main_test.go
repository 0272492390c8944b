package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/promcheck"
)

const (
	committed = "../../deploy/grafana/ragprecision.json"
	rules     = "../../deploy/prometheus/ragprecision.rules.yml"
)

// TestDashboardIsUpToDate fails when deploy/grafana/ragprecision.json is not
// what this program writes.
func TestDashboardIsUpToDate(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run go run ./cmd/ragprecision-dashboard -o deploy/grafana/ragprecision.json", committed)
	}
}

func checker(t *testing.T) *promcheck.Checker {
	t.Helper()
	f, err := promcheck.LoadRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	c, err := promcheck.CheckRules(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDashboardNamesOnlyExportedSeries fails when a panel or variable names
// a metric, label or value the collector does not export and the rules do
// not record.
func TestDashboardNamesOnlyExportedSeries(t *testing.T) {
	data, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if err := checker(t).CheckDashboard(data); err != nil {
		t.Fatal(err)
	}
	queries, err := promcheck.DashboardQueries(data)
	if err != nil {
		t.Fatal(err)
	}
	// Every panel the brief of the dashboard promises is there.
	var titles []string
	for _, q := range queries {
		titles = append(titles, q.Panel)
	}
	all := strings.Join(titles, "\n")
	for _, want := range []string{"Mean Contextual Precision", "Score distribution", "above the threshold",
		"current and recommended", "Spans seen, selected and scored", "unscored, by status and reason",
		"Judge requests", "Judge latency", "Judge tokens", "Judge cost per hour", "cache hit ratio", "Held spans",
		"nDCG and reciprocal rank", "Retrieval outcomes, last hour", "Change of each outcome's share",
		"Recommended retrieval depth", "share by rank", "with the recommended depth", "Mean CP by variant, last hour",
		"Variants now", "Outcome shares by variant",
		"Judge requests by purpose", "Judge cost per hour by purpose", "Canary agreement", "Canary kappa", "Canary CP error",
		"Canary runs by outcome", "Canary confusion matrix", "Shadow agreement", "Shadow kappa", "Shadow spans by status",
		"Cascade: LLM verdicts saved"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel %q", want)
		}
	}
	// Judge changes are marked, per data source and judge.
	annotations, err := promcheck.DashboardAnnotations(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(annotations) != 1 || !strings.Contains(annotations[0].Expr, "judge_version") {
		t.Errorf("annotations %+v: want the judge changes", annotations)
	}
}

func TestDashboardCheckCatchesABrokenQuery(t *testing.T) {
	data, err := render()
	if err != nil {
		t.Fatal(err)
	}
	c := checker(t)
	for old, broken := range map[string]string{
		"otelcol_processor_ragprecision_verdict_cache_hits_total":    "otelcol_processor_ragprecision_cache_hits_total",
		"sum by (status, reason)":                                    "sum by (state, reason)",
		"ragprecision_sampling_percentage:recommended1h":             "ragprecision_sampling_percentage:recommended",
		"label_values(rag_contextual_precision_count, service_name)": "label_values(rag_contextual_precision_count, service)",
		"rag_retrieval_outcome:share1h":                              "rag_retrieval_outcomes:share1h",
		`rank=\"11+\"`:                                               `rank=\"12\"`,
		// The annotation's query.
		"last_over_time(rag_contextual_precision_count{": "last_over_time(rag_contextual_precision_counts{",
		// A canary and a shadow panel.
		"ragprecision_canary:kappa6h":                                     "ragprecision_canary:kappa6",
		`status) (rate(otelcol_processor_ragprecision_shadow_spans_total`: `state) (rate(otelcol_processor_ragprecision_shadow_spans_total`,
	} {
		mutated := bytes.Replace(data, []byte(old), []byte(broken), 1)
		if bytes.Equal(mutated, data) {
			t.Fatalf("%q is not in the dashboard", old)
		}
		if err := c.CheckDashboard(mutated); err == nil {
			t.Errorf("a dashboard with %q passed the check", broken)
		}
	}
}
