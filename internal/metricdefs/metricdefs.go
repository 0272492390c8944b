// Package metricdefs reads the metric definitions of the processor's
// metadata.yaml, the one source of its metrics, for the tools and tests
// that must agree with it: the rules' and dashboard's checker
// (internal/promcheck) and the READMEs' metric tables (Render).
package metricdefs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Metric is one metric as the collector exports it.
type Metric struct {
	// Name is the exported name: mdatagen's prefix and the key.
	Name string
	// Product is true for the rag_* metrics, false for the operational
	// otelcol_processor_ragprecision_* ones.
	Product bool
	// Kind is histogram, counter, updowncounter or gauge.
	Kind        string
	Unit        string
	Description string
	Labels      []Label
	// Buckets are a histogram's upper bounds, +Inf aside.
	Buckets []float64
}

// Label is a metric attribute, by the name it is exported under.
type Label struct {
	Name        string
	Description string
	// Values is the closed set of values, nil when any value may occur.
	Values []string
}

// LabelNames lists the labels' names.
func (m Metric) LabelNames() []string {
	out := make([]string, len(m.Labels))
	for i, l := range m.Labels {
		out[i] = l.Name
	}
	return out
}

// File is the processor's metadata.yaml in this repository.
func File() string {
	_, here, _, _ := runtime.Caller(0)
	wd, _ := os.Getwd()
	return metadataFile(here, wd)
}

// metadataFile is File for this source file's name as the binary knows it
// (here) and a working directory. Built with -trimpath (as make test
// builds, to share compiled packages with the Collector Builder, which
// always trims), here is relative to the module: the module's root is then
// found from the working directory, which is inside the checkout for go
// test, go generate and make's go run.
func metadataFile(here, wd string) string {
	rel := filepath.Join("processor", "ragprecisionprocessor", "metadata.yaml")
	if filepath.IsAbs(here) {
		return filepath.Join(filepath.Dir(here), "..", "..", rel)
	}
	for dir := wd; dir != ""; {
		if isModuleRoot(dir) {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return rel
}

// isModuleRoot reports whether dir holds this repository's go.mod.
func isModuleRoot(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.TrimSpace(line) == "module github.com/ragprecision/ragprecision" {
			return true
		}
	}
	return false
}

// Load reads File.
func Load() ([]Metric, error) {
	data, err := os.ReadFile(File())
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

type metadata struct {
	Attributes map[string]struct {
		NameOverride string   `yaml:"name_override"`
		Description  string   `yaml:"description"`
		Type         string   `yaml:"type"`
		Enum         []string `yaml:"enum"`
	} `yaml:"attributes"`
	Telemetry struct {
		Metrics map[string]struct {
			Prefix      *string  `yaml:"prefix"`
			Description string   `yaml:"description"`
			Unit        string   `yaml:"unit"`
			Attributes  []string `yaml:"attributes"`
			Histogram   *struct {
				Buckets []float64 `yaml:"bucket_boundaries"`
			} `yaml:"histogram"`
			Sum *struct {
				Monotonic bool `yaml:"monotonic"`
			} `yaml:"sum"`
			Gauge *struct{} `yaml:"gauge"`
		} `yaml:"metrics"`
	} `yaml:"telemetry"`
}

// defaultPrefix is what mdatagen puts before a telemetry metric's name
// unless the metric names a prefix of its own.
const defaultPrefix = "otelcol_"

// productPrefix starts the names of the product metrics.
const productPrefix = "rag_"

// Parse reads the metrics of a metadata.yaml, sorted by name.
func Parse(data []byte) ([]Metric, error) {
	var md metadata
	if err := yaml.Unmarshal(data, &md); err != nil {
		return nil, fmt.Errorf("metadata.yaml: %w", err)
	}
	var out []Metric
	for key, d := range md.Telemetry.Metrics {
		prefix := defaultPrefix
		if d.Prefix != nil {
			prefix = *d.Prefix
		}
		m := Metric{Name: prefix + key, Product: strings.HasPrefix(prefix+key, productPrefix),
			Unit: d.Unit, Description: d.Description}
		switch {
		case d.Histogram != nil:
			m.Kind, m.Buckets = "histogram", d.Histogram.Buckets
		case d.Sum != nil && d.Sum.Monotonic:
			m.Kind = "counter"
		case d.Sum != nil:
			m.Kind = "updowncounter"
		case d.Gauge != nil:
			m.Kind = "gauge"
		default:
			return nil, fmt.Errorf("metadata.yaml: %s has no instrument type", m.Name)
		}
		for _, a := range d.Attributes {
			attr, ok := md.Attributes[a]
			if !ok {
				return nil, fmt.Errorf("metadata.yaml: %s has attribute %s, which attributes does not define", m.Name, a)
			}
			l := Label{Name: a, Description: attr.Description, Values: attr.Enum}
			if attr.NameOverride != "" {
				l.Name = attr.NameOverride
			}
			if attr.Type == "bool" {
				l.Values = []string{"true", "false"}
			}
			m.Labels = append(m.Labels, l)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
