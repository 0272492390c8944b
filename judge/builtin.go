package judge

import (
	"context"

	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// lexicalBackend is builtin:lexical: offline, deterministic, no network. It
// weighs terms by their spread across the retrieval itself, so a chunk's
// verdict depends on its neighbours: its unit of work and of caching is the
// whole retrieval.
type lexicalBackend struct{}

func (lexicalBackend) id() string   { return ProviderBuiltin + ":" + BuiltinLexical }
func (lexicalBackend) batch() int   { return 0 }
func (lexicalBackend) inline() bool { return true }
func (lexicalBackend) close()       {}

func (lexicalBackend) attempt(_ context.Context, query, reference string, chunks []string) ([]Verdict, Usage, error) {
	lv := lexical.Judge(query, reference, chunks)
	out := make([]Verdict, len(lv))
	for i, v := range lv {
		out[i] = Verdict{Relevant: v.Relevant, Reason: v.Reason}
	}
	return out, Usage{}, nil
}
