package metricdefs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseNamesLabelsAndValues(t *testing.T) {
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Metric{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	cp, ok := byName["rag_contextual_precision"]
	if !ok || !cp.Product || cp.Kind != "histogram" || len(cp.Buckets) != 10 || cp.Unit != "1" {
		t.Fatalf("rag_contextual_precision: %+v", cp)
	}
	if got := cp.LabelNames(); !slices.Equal(got, []string{"service_name", "data_source", "reference_source", "judge_model", "variant", "judge_version"}) {
		t.Errorf("rag_contextual_precision labels %v", got)
	}
	unscored := byName["otelcol_processor_ragprecision_unscored_spans_total"]
	if unscored.Product || unscored.Kind != "counter" {
		t.Fatalf("unscored_spans_total: %+v", unscored)
	}
	// A name_override gives several attributes one exported name, each with
	// its own values.
	if r := unscored.Labels[1]; r.Name != "reason" || !slices.Contains(r.Values, "max_pending_spans") || !slices.Contains(r.Values, "unknown") {
		t.Errorf("unscored reason %+v", r)
	}
	if r := byName["otelcol_processor_ragprecision_dropped_spans_total"].Labels[0]; r.Name != "reason" || !slices.Equal(r.Values, []string{"refused", "shutdown"}) {
		t.Errorf("dropped reason %+v", r)
	}
	if k := byName["otelcol_processor_ragprecision_held_spans"].Kind; k != "updowncounter" {
		t.Errorf("held_spans kind %s", k)
	}
	if l := byName["otelcol_processor_ragprecision_verdicts_total"].Labels[2]; l.Name != "relevant" || !slices.Equal(l.Values, []string{"true", "false"}) {
		t.Errorf("a bool label's values %+v", l)
	}
}

func TestParseRefusesUndefinedAttribute(t *testing.T) {
	_, err := Parse([]byte("telemetry:\n  metrics:\n    x_total:\n      sum: {monotonic: true}\n      attributes: [nope]\n"))
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("error %v", err)
	}
}

// The component README's metric tables are the ones metadata.yaml renders:
// `go generate ./...` after every change to it.
func TestREADMEIsCurrent(t *testing.T) {
	ms, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(File()), "README.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Replace(doc, Render(ms))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(doc) {
		t.Errorf("%s: the metric tables differ from metadata.yaml; run go generate ./...", path)
	}
	for _, m := range ms {
		name := m.Name
		if !m.Product {
			name = strings.TrimPrefix(name, operationalPrefix)
		}
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("%s has no row for %s", path, m.Name)
		}
	}
}

// TestFileUnderTrimpath finds metadata.yaml both from this file's absolute
// name and, as a -trimpath build knows it (relative to the module), from a
// working directory anywhere inside the checkout.
func TestFileUnderTrimpath(t *testing.T) {
	want, err := filepath.Abs(filepath.Join("..", "..", "processor", "ragprecisionprocessor", "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs("metricdefs.go")
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	trimmed := "github.com/ragprecision/ragprecision/internal/metricdefs/metricdefs.go"
	for _, c := range []struct{ here, wd string }{
		{here, "/"},
		{trimmed, wd},
		{trimmed, filepath.Join(wd, "readmegen")},
		{trimmed, filepath.Join(wd, "..", "..")},
	} {
		got := metadataFile(c.here, c.wd)
		if filepath.Clean(got) != want {
			t.Errorf("metadataFile(%q, %q) = %q, want %q", c.here, c.wd, got, want)
		}
	}
	// Outside the checkout there is no module root: the relative name, so
	// that Load's error names the file it wanted.
	if got := metadataFile(trimmed, t.TempDir()); got != filepath.Join("processor", "ragprecisionprocessor", "metadata.yaml") {
		t.Errorf("outside the checkout: %q", got)
	}
	if _, err := os.Stat(File()); err != nil {
		t.Errorf("File: %v", err)
	}
}
