package judge

import (
	"context"

	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// lexicalJudge is builtin:lexical: offline, deterministic, no network. It
// weighs terms by their spread across the retrieval itself, so a chunk's
// verdict depends on its neighbours; that is why it is never put behind the
// per-chunk verdict cache (and at microseconds per chunk it does not need one).
type lexicalJudge struct{}

func newLexical() lexicalJudge { return lexicalJudge{} }

func (lexicalJudge) ID() string { return ProviderBuiltin + ":" + BuiltinLexical }

func (lexicalJudge) Judge(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	lv := lexical.Judge(req.Query, req.Reference, req.Chunks)
	out := make([]Verdict, len(lv))
	for i, v := range lv {
		out[i] = Verdict{Relevant: v.Relevant, Reason: v.Reason}
	}
	return Result{Verdicts: out}, nil
}
