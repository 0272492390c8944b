// Package loadgen sends OTLP/gRPC trace traffic shaped like a RAG
// application's, as fast as a collector accepts it, for benchmarks.
//
// Batches are ptrace.Traces built once per sender and then updated in place
// before each send (new trace and span IDs, timestamps and retrieval texts),
// so that the generator spends its CPU on little more than marshalling: on
// a small machine it shares the cores with the collector it measures. The
// OTel SDK would pay for every span's creation, attributes and export queue.
package loadgen

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Dialect is a convention retrieval spans are written in (docs/SOURCES.md, "Retrieval dialects").
type Dialect string

const (
	// DialectProject is the project's own keys: rag.query, rag.chunks,
	// rag.reference.
	DialectProject Dialect = "project"
	// DialectGenAI is the OTel GenAI semantic conventions:
	// gen_ai.operation.name = retrieval, gen_ai.retrieval.documents as JSON.
	DialectGenAI Dialect = "gen_ai"
	// DialectOpenInference is Arize OpenInference: openinference.span.kind =
	// RETRIEVER, retrieval.documents.{i}.document.content.
	DialectOpenInference Dialect = "openinference"
	// DialectOpenLLMetry is Traceloop OpenLLMetry: one db.query.result
	// event per chunk.
	DialectOpenLLMetry Dialect = "openllmetry"
)

// Dialects lists the dialects in the order of docs/SOURCES.md's dialect table.
var Dialects = []Dialect{DialectProject, DialectGenAI, DialectOpenInference, DialectOpenLLMetry}

// ReferenceKey is where every retrieval span carries its reference (the
// expected answer the chunks are judged against). Only the project dialect
// reads it by default; a collector judging the other dialects needs
// `attributes: {reference: rag.reference}` in its ragprecision config, or
// their spans pass with status no_reference and cost no judging.
const ReferenceKey = "rag.reference"

// Mix is the relative weight of each dialect among retrieval spans.
type Mix map[Dialect]float64

// ParseMix reads "project=1,gen_ai=1" (weights) or "project" (that dialect
// only).
func ParseMix(s string) (Mix, error) {
	m := Mix{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, weight, hasWeight := strings.Cut(part, "=")
		d := Dialect(strings.TrimSpace(name))
		if !slices.Contains(Dialects, d) {
			return nil, fmt.Errorf("unknown dialect %q: want one of %v", name, Dialects)
		}
		w := 1.0
		if hasWeight {
			var err error
			if w, err = strconv.ParseFloat(strings.TrimSpace(weight), 64); err != nil || w < 0 || math.IsInf(w, 0) {
				return nil, fmt.Errorf("dialect %s: weight %q is not a non-negative number", d, weight)
			}
		}
		m[d] += w
	}
	return m, m.validate()
}

func (m Mix) validate() error {
	total := 0.0
	for _, w := range m {
		total += w
	}
	if !(total > 0) {
		return errors.New("the dialect mix has no positive weight")
	}
	return nil
}

// String is the mix in ParseMix's format, in the order of Dialects.
func (m Mix) String() string {
	var parts []string
	for _, d := range Dialects {
		if w, ok := m[d]; ok && w > 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", d, w))
		}
	}
	return strings.Join(parts, ",")
}

// Only reports whether every retrieval span is written in dialect d.
func (m Mix) Only(d Dialect) bool {
	for other, w := range m {
		if other != d && w > 0 {
			return false
		}
	}
	return m[d] > 0
}

// assign gives each of n retrieval spans a dialect, in proportion to the
// weights (largest remainder), spread over the batch rather than grouped.
func (m Mix) assign(n int) []Dialect {
	total := 0.0
	for _, w := range m {
		total += w
	}
	type share struct {
		d     Dialect
		count int
		rem   float64
	}
	var shares []share
	given := 0
	for _, d := range Dialects {
		exact := float64(n) * m[d] / total
		c := int(exact)
		shares = append(shares, share{d, c, exact - float64(c)})
		given += c
	}
	order := slices.Clone(shares)
	slices.SortStableFunc(order, func(a, b share) int {
		switch {
		case a.rem > b.rem:
			return -1
		case a.rem < b.rem:
			return 1
		}
		return 0
	})
	for i := 0; given < n; i++ {
		for j := range shares {
			if shares[j].d == order[i].d {
				shares[j].count++
			}
		}
		given++
	}
	// Interleave: take from each dialect in turn while it has some left.
	out := make([]Dialect, 0, n)
	for len(out) < n {
		for j := range shares {
			if shares[j].count > 0 {
				out = append(out, shares[j].d)
				shares[j].count--
			}
		}
	}
	return out
}

// Traffic is the shape of every batch.
type Traffic struct {
	// BatchSize is the number of spans per export request.
	BatchSize int
	// RetrievalShare is the share of spans that are retrieval spans; each
	// batch holds round(BatchSize × RetrievalShare) of them.
	RetrievalShare float64
	// Chunks is the number of chunks per retrieval span.
	Chunks int
	// ChunkBytes is the length of each chunk's text.
	ChunkBytes int
	// Dialects is the mix of conventions retrieval spans are written in.
	Dialects Mix
	// RepeatShare is the share of retrieval spans that repeat the query,
	// reference and chunks of one sent shortly before by the same sender,
	// so that a verdict cache can answer them. The others are all distinct.
	RepeatShare float64
}

// DefaultTraffic is the load of docs/BENCHMARKS.md's measurements: batches of 512
// spans, 10% of them retrieval spans with 5 chunks of 500 bytes, in the
// project's keys, every one distinct.
func DefaultTraffic() Traffic {
	return Traffic{BatchSize: 512, RetrievalShare: 0.10, Chunks: 5, ChunkBytes: 500, Dialects: Mix{DialectProject: 1}}
}

// Validate reports what is wrong with t.
func (t Traffic) Validate() error {
	var errs []error
	if t.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch size must be at least 1, got %d", t.BatchSize))
	}
	if !(t.RetrievalShare >= 0 && t.RetrievalShare <= 1) {
		errs = append(errs, fmt.Errorf("retrieval share must be within [0, 1], got %v", t.RetrievalShare))
	}
	if t.Chunks < 1 {
		errs = append(errs, fmt.Errorf("chunks per retrieval must be at least 1, got %d", t.Chunks))
	}
	if t.ChunkBytes < minChunkBytes {
		errs = append(errs, fmt.Errorf("chunk bytes must be at least %d (room for the chunk's unique tag), got %d", minChunkBytes, t.ChunkBytes))
	}
	if !(t.RepeatShare >= 0 && t.RepeatShare <= 1) {
		errs = append(errs, fmt.Errorf("repeat share must be within [0, 1], got %v", t.RepeatShare))
	}
	if t.Dialects == nil {
		errs = append(errs, errors.New("no dialect mix"))
	} else if err := t.Dialects.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RetrievalsPerBatch is the number of retrieval spans in each batch.
func (t Traffic) RetrievalsPerBatch() int {
	return int(math.Round(float64(t.BatchSize) * t.RetrievalShare))
}

// String describes t in one line.
func (t Traffic) String() string {
	return fmt.Sprintf("batches of %d spans, %d of them retrieval spans (%d chunks of %d B, %s, %.0f%% repeated)",
		t.BatchSize, t.RetrievalsPerBatch(), t.Chunks, t.ChunkBytes, t.Dialects, 100*t.RepeatShare)
}
