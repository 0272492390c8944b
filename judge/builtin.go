package judge

import (
	"context"

	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// lexicalBackend is builtin:lexical: offline, deterministic, no network. It
// weighs terms by their spread across the retrieval itself, so a chunk's
// verdict depends on its neighbours: its unit of work and of caching is the
// whole retrieval.
type lexicalBackend struct{ params lexical.Params }

func (lexicalBackend) id() string   { return lexicalID }
func (lexicalBackend) batch() int   { return 0 }
func (lexicalBackend) inline() bool { return true }
func (lexicalBackend) close()       {}

func (b lexicalBackend) attempt(_ context.Context, query, reference string, chunks []string) ([]Verdict, Usage, error) {
	return lexicalVerdicts(b.params, query, reference, chunks), Usage{}, nil
}

// lexicalParams has builtin:lexical read as much of each chunk as
// max_chunk_chars lets through, as an LLM judge would, rather than its own
// shorter default cut: in a cascade both stages see the same chunk.
func lexicalParams(maxChunkChars int) lexical.Params {
	p := lexical.DefaultParams()
	p.ChunkRunes = maxChunkChars
	return p
}

// lexicalID is builtin:lexical's "provider:model".
const lexicalID = ProviderBuiltin + ":" + BuiltinLexical

// lexicalVerdicts judges chunks with builtin:lexical.
func lexicalVerdicts(p lexical.Params, query, reference string, chunks []string) []Verdict {
	lv := p.Judge(query, reference, chunks)
	out := make([]Verdict, len(lv))
	for i, v := range lv {
		out[i] = Verdict{Relevant: v.Relevant, Reason: v.Reason, Stage: lexicalID, Confidence: v.Confidence}
	}
	return out
}
