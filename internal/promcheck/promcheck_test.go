package promcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/doclinks"
)

const rulesPath = "../../deploy/prometheus/ragprecision.rules.yml"

func TestAnalyzeFindsSelectorsAndGrouping(t *testing.T) {
	expr := `
	  sum by (service_name, data_source) (increase(rag_contextual_precision_bucket{le="0.7", judge_model!~"builtin:.*"}[1h] offset 1h))
	    / on () group_left () # a comment naming not_a_metric{x="y"}
	  (sum(rate(otelcol_processor_ragprecision_scored_spans_total[$__rate_interval])) > 0)
	  and topk(3, max without (instance) (otelcol_processor_ragprecision_held_spans)) > bool 1e-3
	  or {__name__="otelcol_processor_ragprecision_judge_up", judge_model='a\'b'}`
	a, err := Analyze(expr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range a.Selectors {
		got = append(got, s.String())
	}
	want := []string{
		`rag_contextual_precision_bucket{le="0.7",judge_model!~"builtin:.*"}`,
		`otelcol_processor_ragprecision_scored_spans_total{}`,
		`otelcol_processor_ragprecision_held_spans{}`,
		`otelcol_processor_ragprecision_judge_up{__name__="otelcol_processor_ragprecision_judge_up",judge_model="a'b"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("selectors\n got %q\nwant %q", got, want)
	}
	if g := strings.Join(a.Grouping, ","); g != "service_name,data_source,instance" {
		t.Errorf("grouping %q", g)
	}
}

func TestAnalyzeRejectsMalformedText(t *testing.T) {
	for _, expr := range []string{`x{a="b"`, `x{a~"b"}`, `x{a="b}`, `sum by (a, 1) (x)`, "x ? y"} {
		if _, err := Analyze(expr); err == nil {
			t.Errorf("%s: no error", expr)
		}
	}
}

func TestCheckNamesWhatIsWrong(t *testing.T) {
	c := NewChecker()
	for expr, want := range map[string]string{
		`rate(rag_contextual_precision_total[5m])`:                                      "rag_contextual_precision_total: no such metric",
		`rag_contextual_precision_count{datasource="docs"}`:                             `has no label "datasource"`,
		`otelcol_processor_ragprecision_unscored_spans_total{status=~"budget|overfow"}`: `"overfow" is not a value of status`,
		`otelcol_processor_ragprecision_judge_requests_total{outcome!="failed"}`:        `"failed" is not a value of outcome`,
		`rag_contextual_precision_bucket{le="0.75"}`:                                    `no bucket le="0.75"`,
		`sum by (status) (otelcol_processor_ragprecision_held_spans)`:                   `grouping label "status"`,
		`{__name__=~"rag.*"}`: "has no metric name",
		`otelcol_processor_ragprecision_judge_latency_seconds_bucket{le="0.7"}`:                      `no bucket le="0.7"`,
		`sum by (reason) (otelcol_processor_ragprecision_dropped_spans_total{reason="max_pending"})`: `"max_pending" is not a value of reason`,
		`rag_retrieval_outcome_total{outcome="missed"}`:                                              `"missed" is not a value of outcome`,
		`rag_retrieval_chunks_relevant_total{rank=~"1|2|12"}`:                                        `"12" is not a value of rank`,
		`rag_retrieval_ndcg_bucket{le="0.95"}`:                                                       `no bucket le="0.95"`,
		`sum by (variant) (otelcol_processor_ragprecision_scored_spans_total)`:                       `grouping label "variant"`,
	} {
		err := c.Check(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", expr, err, want)
		}
	}
	for _, expr := range []string{
		`sum by (service_name, data_source, job, instance) (rate(rag_contextual_precision_count[5m]))`,
		`rag_contextual_precision_bucket{le="1.0"} + rag_contextual_precision_bucket{le="+Inf"}`,
		`otelcol_processor_ragprecision_unscored_spans_total{status=~"$status", reason=~".+"}`,
		`otelcol_processor_ragprecision_unscored_spans_total{status="overflow", reason="judge_capacity"}`,
		`otelcol_processor_ragprecision_judge_requests_total{outcome="retry", reason="rate_limited"}`,
		`otelcol_processor_ragprecision_judge_latency_seconds_bucket{le="2.5"}`,
		`sum by (service_name, data_source, variant) (increase(rag_contextual_precision_squares_total{variant!=""}[1h]))`,
		`rag_retrieval_outcome_total{outcome=~"miss|misranked", variant="v2"}`,
		`rag_retrieval_chunks_judged_total{rank="11+"} + ignoring (rank) rag_retrieval_chunks_relevant_total{rank="10"}`,
		`rag_retrieval_reciprocal_rank_bucket{le="0.5"} / rag_retrieval_reciprocal_rank_count`,
	} {
		if err := c.Check(expr); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

func TestRecordedSeriesCarryTheirByLabels(t *testing.T) {
	c := NewChecker()
	if err := c.AddRecorded("a:count:1h", `sum by (service_name, data_source) (increase(rag_contextual_precision_count[1h]))`); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRecorded("a:mean:1h", `a:count:1h / a:count:1h`); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(`a:mean:1h{data_source="docs"}`); err != nil {
		t.Error(err)
	}
	if err := c.Check(`a:mean:1h{judge_model="x"}`); err == nil {
		t.Error("a label aggregated away was accepted")
	}
	if err := c.AddRecorded("b", `a:unknown`); err == nil {
		t.Error("a rule reading an unknown series was accepted")
	}
}

// TestRulesNameOnlyExportedSeries is the check of the rule file against the
// collector's metrics: it fails when a rule names a metric, label, label
// value or bucket the processor does not export.
func TestRulesNameOnlyExportedSeries(t *testing.T) {
	f, err := LoadRules(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckRules(f); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, r := range f.Rules() {
		if r.Alert == "" {
			continue
		}
		alerts = append(alerts, r.Alert)
		if r.For == "" {
			t.Errorf("%s has no for:", r.Alert)
		}
		for _, a := range []string{"summary", "description"} {
			if r.Annotations[a] == "" {
				t.Errorf("%s has no %s", r.Alert, a)
			}
		}
		if r.Labels["severity"] == "" {
			t.Errorf("%s has no severity", r.Alert)
		}
	}
	operating, err := os.ReadFile("../../docs/OPERATING.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if !strings.Contains(string(operating), "### "+a) {
			t.Errorf("docs/OPERATING.md has no section ### %s", a)
		}
		if !strings.Contains(string(operating), "| `"+a+"` |") {
			t.Errorf("docs/OPERATING.md's alert table has no row for %s", a)
		}
	}
}

// runbookURL is the runbook_url annotation every alert carries: a base URL,
// replaced by the external label ragprecision_runbook_base when it is set,
// and the anchor of the alert's section of docs/OPERATING.md.
var runbookURL = regexp.MustCompile(`^\{\{ or \$externalLabels\.ragprecision_runbook_base "(https://[^"#]+)" \}\}#([a-z0-9_-]+)$`)

// Every alert links its runbook section by runbook_url, under one base, and
// the section exists: the anchor GitHub gives a heading of
// docs/OPERATING.md. No annotation names a path in the repository.
func TestAlertsHaveRunbookURLs(t *testing.T) {
	f, err := LoadRules(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	operating, err := os.ReadFile("../../docs/OPERATING.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := doclinks.Headings(string(operating))
	bases := map[string]bool{}
	alerts := 0
	for _, r := range f.Rules() {
		if r.Alert == "" {
			continue
		}
		alerts++
		m := runbookURL.FindStringSubmatch(r.Annotations["runbook_url"])
		if m == nil {
			t.Errorf("%s: runbook_url %q is not {{ or $externalLabels.ragprecision_runbook_base \"https://…\" }}#anchor", r.Alert, r.Annotations["runbook_url"])
			continue
		}
		bases[m[1]] = true
		if !anchors[m[2]] {
			t.Errorf("%s: runbook_url's anchor #%s is no heading of docs/OPERATING.md", r.Alert, m[2])
		}
		if m[2] != strings.ToLower(r.Alert) {
			t.Errorf("%s: runbook_url points at #%s, not at the alert's own section", r.Alert, m[2])
		}
		for name, text := range r.Annotations {
			if name != "runbook_url" && (strings.Contains(text, "docs/") || strings.Contains(text, "OPERATING.md")) {
				t.Errorf("%s: annotation %s names a repository path: %q", r.Alert, name, text)
			}
		}
	}
	if alerts == 0 || len(bases) != 1 {
		t.Errorf("%d alerts, runbook bases %v: want one base for all", alerts, bases)
	}
}

func TestRulesWithABrokenNameFail(t *testing.T) {
	data, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, mutate := range []func(string) string{
		func(s string) string {
			return strings.Replace(s, "rag_contextual_precision_squares_total", "rag_contextual_precision_squares", 1)
		},
		func(s string) string {
			return strings.Replace(s, `status=~"budget|overflow"`, `status=~"budget|overflowed"`, 1)
		},
		func(s string) string {
			return strings.Replace(s, "by (service_name, data_source)", "by (service, data_source)", 1)
		},
		// A query of an alert's annotations.
		func(s string) string {
			return strings.Replace(s, "share_change1h{service_name=%q", "share_changes1h{service_name=%q", 1)
		},
		func(s string) string {
			return strings.Replace(s, `outcome=~"miss|misranked"})`+"`", `outcome=~"miss|misrank"})`+"`", 1)
		},
	} {
		f, err := ParseRules([]byte(mutate(string(data))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CheckRules(f); err == nil {
			t.Error("a broken rule file passed the check")
		}
	}
}

func TestScaleDuration(t *testing.T) {
	for _, c := range []struct {
		in     string
		factor float64
		want   string
	}{
		{"1h", 1.0 / 120, "30s"},
		{"1w", 1.0 / 120, "1h24m"},
		{"15m", 1.0 / 120, "7s500ms"},
		{"1h30m", 2, "3h"},
		{"10m", 1, "10m"},
	} {
		got, err := ScaleDuration(c.in, c.factor)
		if err != nil || got != c.want {
			t.Errorf("%s × %g = %q, %v; want %q", c.in, c.factor, got, err, c.want)
		}
	}
	if _, err := ScaleDuration("1s", 1e-6); err == nil {
		t.Error("a sub-millisecond duration was accepted")
	}
	if _, err := ScaleDuration("5 minutes", 1); err == nil {
		t.Error("a malformed duration was accepted")
	}
}

func TestScaleExprTouchesOnlyDurations(t *testing.T) {
	in := `rate(x{le="1h"}[1h] offset 1w) * 3600 + max_over_time(y[10m:1m]) # [2h]`
	got, err := ScaleExpr(in, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	want := `rate(x{le="1h"}[30m] offset 3d12h) * 3600 + max_over_time(y[5m:30s]) # [2h]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestParseFactor(t *testing.T) {
	for in, want := range map[string]float64{"1/120": 1.0 / 120, "0.5": 0.5, "2": 2, " 1 / 4 ": 0.25} {
		if got, err := ParseFactor(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "-1", "1/0", "x", ""} {
		if _, err := ParseFactor(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestScaleRules scales the real rule file and checks that every window
// changed and nothing else did.
func TestScaleRules(t *testing.T) {
	data, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	same, err := ScaleRules(data, 1)
	if err != nil {
		t.Fatal(err)
	}
	identity, err := ParseRules(same)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(orig, identity) {
		t.Fatal("scaling by 1 changed the rules")
	}
	scaledData, err := ScaleRules(data, 1.0/120)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := ParseRules(scaledData)
	if err != nil {
		t.Fatal(err)
	}
	o, s := orig.Rules(), scaled.Rules()
	if len(o) != len(s) {
		t.Fatalf("%d rules became %d", len(o), len(s))
	}
	for i := range o {
		if o[i].Name() != s[i].Name() || !reflect.DeepEqual(o[i].Labels, s[i].Labels) || !reflect.DeepEqual(o[i].Annotations, s[i].Annotations) {
			t.Errorf("rule %s changed beyond its windows", o[i].Name())
		}
		if strings.Contains(o[i].Expr, "[1h]") && !strings.Contains(s[i].Expr, "[30s]") {
			t.Errorf("rule %s: [1h] not scaled: %s", o[i].Name(), s[i].Expr)
		}
		if strings.Contains(s[i].Expr, "[1h]") || strings.Contains(s[i].Expr, "[1w]") || strings.Contains(s[i].Expr, "[15m]") {
			t.Errorf("rule %s: a window was left unscaled: %s", o[i].Name(), s[i].Expr)
		}
		if o[i].For != "" {
			want, _ := ScaleDuration(o[i].For, 1.0/120)
			if s[i].For != want {
				t.Errorf("rule %s: for %s became %s, want %s", o[i].Name(), o[i].For, s[i].For, want)
			}
		}
	}
	if _, err := CheckRules(scaled); err != nil {
		t.Errorf("the scaled rules fail the check: %v", err)
	}
	// Prometheus's own parser accepts the scaled file.
	if promtool := findTool(t, "promtool"); promtool != "" {
		path := filepath.Join(t.TempDir(), "scaled.rules.yml")
		if err := os.WriteFile(path, scaledData, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	}
}

// TestPromtoolUnitTests checks the example prometheus.yml (and the rules it
// loads) and runs the rules' unit tests: every alert fired and kept quiet on
// series built for it, recorded values worked out by hand, a day of two
// variants from a seeded noise model (cmd/ragprecision-variant-tests), and
// ten days of the drift canary (cmd/ragprecision-canary-tests).
func TestPromtoolUnitTests(t *testing.T) {
	promtool := findTool(t, "promtool")
	if promtool == "" {
		return
	}
	// One promtool a file, in parallel: each evaluates the rules on one
	// core, for half a minute.
	for _, args := range [][]string{{"check", "config", "prometheus.yml"}, {"test", "rules", "ragprecision.rules.test.yml"},
		{"test", "rules", "ragprecision.variants.test.yml"}, {"test", "rules", "ragprecision.canary.test.yml"}} {
		t.Run(args[len(args)-1], func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(promtool, args...)
			cmd.Dir = filepath.Dir(rulesPath)
			// Rule evaluation allocates briskly: a larger heap target
			// spends a quarter less CPU on collection (32 against 23
			// CPU-seconds for the hand-written tests), for some 100 MB.
			cmd.Env = append(os.Environ(), "GOGC=400")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("promtool %v: %v\n%s", args, err, out)
			}
		})
	}
}

// findTool finds a Prometheus binary. Under CI it must be there (.ci/run
// installs it); elsewhere the test that needs it is skipped with a message.
func findTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found: .ci/run installs the Debian package prometheus", name)
	}
	t.Skipf("%s not found; install the Debian package prometheus (apt-get install prometheus) to run this test", name)
	return ""
}

// A one-to-many match keeps the labels of its many side, label_replace
// writes one, and topk keeps every label of what it selects: the recorded
// series carry them, with their closed sets.
func TestRecordedSeriesCarryKeptLabels(t *testing.T) {
	c := NewChecker()
	for name, expr := range map[string]string{
		"o:count": `sum by (service_name, data_source, outcome) (increase(rag_retrieval_outcome_total[1h]))`,
		"r:count": `sum by (service_name, data_source, rank) (increase(rag_retrieval_chunks_relevant_total[1h]))`,
	} {
		if err := c.AddRecorded(name, expr); err != nil {
			t.Fatal(err)
		}
	}
	for name, expr := range map[string]string{
		"o:share":   `o:count / ignoring (outcome) group_left () sum by (service_name, data_source) (o:count)`,
		"o:one":     `o:count{outcome="miss"} / ignoring (outcome) sum by (service_name, data_source) (o:count)`,
		"r:cumul":   `label_replace(sum by (service_name, data_source) (r:count{rank=~"1|2"}), "rank", "2", "", "")`,
		"r:labeled": `sum by (service_name) (r:count) * on (service_name) group_left (data_source) r:count{rank="1"}`,
		"r:top":     `topk by (service_name) (1, r:count)`,
	} {
		if err := c.AddRecorded(name, expr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for expr, want := range map[string]string{
		`o:share{outcome="misranked", data_source="docs"}`: "",
		`o:share{outcome="missed"}`:                        `"missed" is not a value of outcome`,
		`o:one{outcome="miss"}`:                            `has no label "outcome"`,
		`r:cumul{rank="2", service_name="shop"}`:           "",
		`r:cumul{rank="12"}`:                               `"12" is not a value of rank`,
		`r:labeled{data_source="docs"}`:                    "",
		`r:labeled{rank="1"}`:                              `has no label "rank"`,
		`r:top{rank="2", data_source="docs"}`:              "",
		`r:top{rank="13"}`:                                 `"13" is not a value of rank`,
	} {
		err := c.Check(expr)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", expr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", expr, err, want)
		}
	}
}

func TestTemplateQueries(t *testing.T) {
	text := "a {{ with printf `topk(1, x{a=%q, b=%q})` $labels.a $labels.b | query }}{{ . | first | value }}{{ end }} " +
		`{{ with query "up" }}{{ . | first | label "job" }}{{ end }} {{ $value | printf "%.3f" }} ` +
		`{{ with printf "y{c=\"%s\"}" $labels.c | query }}{{ end }}`
	got := TemplateQueries(text)
	want := []string{`topk(1, x{a="x", b="x"})`, `up`, `y{c="x"}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
