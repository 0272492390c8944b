package spanreader

import "testing"

// The data_source label: the configured attribute, else
// gen_ai.data_source.id, else the span name; empty values fall through.
func TestDataSource(t *testing.T) {
	s := newSpan()
	s.SetName("vector-search")
	if got := DataSource(s, ""); got != "vector-search" {
		t.Fatalf("no attribute: %q, want the span name", got)
	}
	s.Attributes().PutStr("gen_ai.data_source.id", "")
	if got := DataSource(s, "index"); got != "vector-search" {
		t.Fatalf("empty gen_ai.data_source.id: %q, want the span name", got)
	}
	s.Attributes().PutStr("gen_ai.data_source.id", "handbook")
	if got := DataSource(s, "index"); got != "handbook" {
		t.Fatalf("gen_ai.data_source.id: %q", got)
	}
	s.Attributes().PutInt("index", 7)
	if got := DataSource(s, "index"); got != "7" {
		t.Fatalf("configured attribute: %q, want it as a string", got)
	}
	if got := DataSource(s, ""); got != "handbook" {
		t.Fatalf("no key configured: %q", got)
	}
}
