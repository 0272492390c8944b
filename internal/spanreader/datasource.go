package spanreader

import "go.opentelemetry.io/collector/pdata/ptrace"

// keyGenAIDataSource names the data source in the GenAI conventions.
const keyGenAIDataSource = "gen_ai.data_source.id"

// DataSource is the data_source label of a retrieval span (README,
// metrics): the attribute named by key (attributes.data_source) when set
// and not empty, else gen_ai.data_source.id, else the span name.
func DataSource(span ptrace.Span, key string) string {
	attrs := span.Attributes()
	if key != "" {
		if v, ok := attrs.Get(key); ok {
			if s := v.AsString(); s != "" {
				return s
			}
		}
	}
	if v, ok := attrs.Get(keyGenAIDataSource); ok {
		if s := v.AsString(); s != "" {
			return s
		}
	}
	return span.Name()
}
