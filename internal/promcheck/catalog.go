package promcheck

import (
	"sort"
	"sync"

	"github.com/ragprecision/ragprecision/internal/metricdefs"
)

// Family is a metric family the collector exports on its Prometheus
// endpoint, as processor/ragprecisionprocessor/metadata.yaml defines it.
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

var catalog = sync.OnceValues(metricdefs.Load)

// Catalog lists every metric family of the ragprecision processor, read
// from its metadata.yaml. The end-to-end test holds it against a live
// scrape of the built collector, so it cannot drift from the code.
func Catalog() []Family {
	ms, err := catalog()
	if err != nil {
		panic("promcheck: " + err.Error())
	}
	out := make([]Family, len(ms))
	for i, m := range ms {
		f := Family{Name: m.Name, Histogram: m.Kind == "histogram", Labels: m.LabelNames(), Buckets: m.Buckets}
		for _, l := range m.Labels {
			if len(l.Values) > 0 {
				if f.Values == nil {
					f.Values = map[string][]string{}
				}
				f.Values[l.Name] = l.Values
			}
		}
		out[i] = f
	}
	return out
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
