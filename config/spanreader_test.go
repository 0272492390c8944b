package config

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The readers take attributes: and the limits from the configuration.
func TestNewSpanReader(t *testing.T) {
	c := Default()
	c.Attributes.Chunks, c.Attributes.Reference = "my.chunks", "my.reference"
	c.TopK = 2
	s := ptrace.NewSpan()
	s.Attributes().PutStr("my.reference", "Paris")
	chunks := s.Attributes().PutEmptySlice("my.chunks")
	for _, t := range []string{"a", "b", "c"} {
		chunks.AppendEmpty().SetStr(t)
	}
	r := NewSpanReader(c)
	d, ok := r.Recognise(s)
	if !ok {
		t.Fatal("the configured chunks attribute is not recognised")
	}
	ret, err := r.Read(s, d)
	if err != nil || len(ret.Chunks) != 2 || ret.Reference != "Paris" {
		t.Fatalf("read %+v, %v: want top_k 2 chunks and the configured reference", ret, err)
	}
	c.MaxChunks = 1
	if _, err := NewSpanReader(c).Read(s, d); err == nil {
		t.Fatal("max_chunks 1 lets 2 chunks through")
	}
}
