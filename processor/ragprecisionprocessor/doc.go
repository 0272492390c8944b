// Package ragprecisionprocessor is an OpenTelemetry Collector traces
// processor that scores the Contextual Precision of sampled retrieval spans
// with a relevance judge, and writes the score onto the spans and into the
// rag_contextual_precision histogram (README.md in this directory).
package ragprecisionprocessor

// metadata.yaml is the source of internal/metadata, documentation.md and the
// status table of README.md. mdatagen runs with go run, not go tool: go tool
// takes no build flags, so it would ignore the -trimpath of GOFLAGS (the
// Makefile's) and compile every package mdatagen imports a second time.
//go:generate go run -modfile=../../internal/tools/go.mod go.opentelemetry.io/collector/cmd/mdatagen metadata.yaml
//go:generate go run ../../internal/metricdefs/readmegen README.md
