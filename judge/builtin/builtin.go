// Package builtin holds the judges that run in the collector's process:
// builtin:lexical, offline, deterministic, with no network. Its scoring is in
// judge/internal/lexical; this package adapts it to judge.Backend, for the
// engine and for a cascade's first stage.
package builtin

import (
	"context"

	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// Provider is the provider name of the builtin judges, as in
// "builtin:lexical".
const Provider = "builtin"

// LexicalName is the model name of the lexical judge.
const LexicalName = "lexical"

// LexicalID is builtin:lexical's "provider:model".
const LexicalID = Provider + ":" + LexicalName

// LexicalVersion identifies how builtin:lexical decides: change it whenever
// a change to judge/internal/lexical changes a verdict, so that the
// judge_version of its scores changes with it.
const LexicalVersion = "lexical-2026-11"

// Lexical is builtin:lexical. It weighs terms by their spread across the
// retrieval itself, so a chunk's verdict depends on its neighbours: its unit
// of work is the whole retrieval.
type Lexical struct{ params lexical.Params }

var _ judge.Backend = Lexical{}

// NewLexical reads as much of each chunk as maxChunkChars lets through, as
// an LLM judge would, rather than the lexical judge's own shorter default
// cut: in a cascade both stages see the same chunk.
func NewLexical(maxChunkChars int) Lexical {
	p := lexical.DefaultParams()
	p.ChunkRunes = maxChunkChars
	return Lexical{params: p}
}

// ID is "builtin:lexical".
func (Lexical) ID() string { return LexicalID }

// PerChunk is false: the chunks of a retrieval are judged together.
func (Lexical) PerChunk() bool { return false }

// Inline is true: an attempt takes microseconds and never fails.
func (Lexical) Inline() bool { return true }

// CacheSalt is the judge's ID: its verdicts depend on nothing else.
func (Lexical) CacheSalt() string { return LexicalID }

// Close does nothing: the judge holds nothing.
func (Lexical) Close() {}

// Attempt judges chunks; every verdict carries its confidence.
func (l Lexical) Attempt(_ context.Context, query, reference string, chunks []string) ([]judge.Verdict, judge.Usage, error) {
	lv := l.params.Judge(query, reference, chunks)
	out := make([]judge.Verdict, len(lv))
	for i, v := range lv {
		out[i] = judge.Verdict{Relevant: v.Relevant, Reason: v.Reason, Stage: LexicalID, Confidence: v.Confidence}
	}
	return out, judge.Usage{}, nil
}
