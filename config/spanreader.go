package config

import "github.com/ragprecision/ragprecision/internal/spanreader"

// NewSpanReader is the dialect readers as c configures them: the keys of
// attributes: and the limits top_k, max_chunks and max_retrieval_bytes.
// The processor reads live spans with it, and ragprecision-eval -traces a
// recording of them.
func NewSpanReader(c *Config) *spanreader.Reader {
	return spanreader.New(
		spanreader.Keys{Query: c.Attributes.Query, Answer: c.Attributes.Answer, Reference: c.Attributes.Reference, Chunks: c.Attributes.Chunks},
		spanreader.Limits{TopK: c.TopK, MaxChunks: c.MaxChunks, MaxBytes: c.MaxRetrievalBytes},
	)
}
