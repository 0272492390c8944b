package metricdefs

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Markers delimit the generated metric tables in a Markdown file.
const (
	BeginMarker = "<!-- metrics: generated from processor/ragprecisionprocessor/metadata.yaml by go generate; do not edit -->"
	EndMarker   = "<!-- end of generated metrics -->"
)

// operationalPrefix is left out of the operational table's names, which
// all start with it.
const operationalPrefix = "otelcol_processor_ragprecision_"

// Render is the Markdown of the metric tables: the product metrics, then
// the operational ones.
func Render(ms []Metric) string {
	var b strings.Builder
	b.WriteString("Product metrics:\n\n| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range ms {
		if m.Product {
			writeRow(&b, "`"+m.Name+"`", m)
		}
	}
	b.WriteString("\nOperational metrics, all prefixed `" + operationalPrefix + "`:\n\n| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range ms {
		if !m.Product {
			writeRow(&b, "`"+strings.TrimPrefix(m.Name, operationalPrefix)+"`", m)
		}
	}
	b.WriteString("\nLabels:\n\n")
	for _, l := range labelsOf(ms) {
		fmt.Fprintf(&b, "- `%s`%s: %s\n", l.Name, l.usedBy, l.Description)
	}
	return b.String()
}

// usedLabel is a label and, when labels of that name differ by metric, the
// metrics it is this one of.
type usedLabel struct {
	Label
	usedBy string
}

// labelsOf lists the distinct labels of ms, by name.
func labelsOf(ms []Metric) []usedLabel {
	type key struct{ name, description string }
	var out []usedLabel
	metricsOf := map[key][]string{}
	names := map[string]int{}
	for _, m := range ms {
		for _, l := range m.Labels {
			k := key{l.Name, l.Description}
			if _, ok := metricsOf[k]; !ok {
				out = append(out, usedLabel{Label: Label{Name: l.Name, Description: l.Description}})
				names[l.Name]++
			}
			metricsOf[k] = append(metricsOf[k], "`"+strings.TrimPrefix(m.Name, operationalPrefix)+"`")
		}
	}
	for i := range out {
		if names[out[i].Name] > 1 {
			out[i].usedBy = " of " + strings.Join(metricsOf[key{out[i].Name, out[i].Description}], ", ")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func writeRow(b *strings.Builder, name string, m Metric) {
	kind := m.Kind
	if m.Unit != "" {
		kind += ", unit `" + m.Unit + "`"
	}
	if len(m.Buckets) > 0 {
		bounds := make([]string, len(m.Buckets))
		for i, v := range m.Buckets {
			bounds[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		kind += ", buckets " + strings.Join(bounds, ", ")
	}
	labels := make([]string, len(m.Labels))
	for i, l := range m.Labels {
		labels[i] = "`" + l.Name + "`"
		if len(l.Values) > 0 {
			labels[i] += " = `" + strings.Join(l.Values, "` / `") + "`"
		}
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, kind, strings.Join(labels, ", "), m.Description)
}

// Replace puts tables between the markers of a Markdown file's content.
func Replace(doc []byte, tables string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(BeginMarker))
	end := bytes.Index(doc, []byte(EndMarker))
	if begin < 0 || end < begin {
		return nil, errors.New("no generated metrics section: put " + BeginMarker + " and " + EndMarker + " where the tables go")
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(BeginMarker)])
	out.WriteString("\n")
	out.WriteString(tables)
	out.Write(doc[end:])
	return out.Bytes(), nil
}
