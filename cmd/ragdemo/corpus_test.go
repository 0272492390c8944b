package main

import (
	"context"
	"slices"
	"testing"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/scoring"
)

// TestCorpusWellFormed checks what the demo's story relies on: both
// rankings of a question hold the same chunks, the good one starts with a
// relevant chunk, and the bad one puts every distractor above every relevant
// chunk.
func TestCorpusWellFormed(t *testing.T) {
	used := map[string]bool{}
	dialects := map[dialect]bool{}
	for _, q := range questions {
		t.Run(q.text, func(t *testing.T) {
			if q.text == "" || q.answer == "" {
				t.Fatal("question and answer must not be empty")
			}
			switch q.dialect {
			case dialectProject, dialectOpenInference, dialectGenAI:
				dialects[q.dialect] = true
			default:
				t.Fatalf("unknown dialect %q", q.dialect)
			}
			for _, id := range slices.Concat(q.good, q.bad, q.relevant) {
				if _, ok := chunks[id]; !ok {
					t.Fatalf("unknown chunk %q", id)
				}
				used[id] = true
			}
			good, bad := slices.Sorted(slices.Values(q.good)), slices.Sorted(slices.Values(q.bad))
			if !slices.Equal(good, bad) {
				t.Fatalf("good and bad rankings hold different chunks: %v vs %v", good, bad)
			}
			if len(slices.Compact(good)) != len(q.good) {
				t.Fatalf("a chunk appears twice: %v", q.good)
			}
			if len(q.relevant) == 0 || len(q.relevant) >= len(q.good) {
				t.Fatalf("want some relevant chunks and some distractors, got %d relevant of %d", len(q.relevant), len(q.good))
			}
			isRelevant := func(id string) bool { return slices.Contains(q.relevant, id) }
			for _, id := range q.relevant {
				if !slices.Contains(q.good, id) {
					t.Fatalf("relevant chunk %q is not retrieved", id)
				}
			}
			if !isRelevant(q.good[0]) {
				t.Errorf("good ranking starts with a distractor, %q", q.good[0])
			}
			distractors := len(q.good) - len(q.relevant)
			for i, id := range q.bad {
				if isRelevant(id) != (i >= distractors) {
					t.Errorf("bad ranking %v must hold every distractor above every relevant chunk", q.bad)
					break
				}
			}
		})
	}
	if len(dialects) < 2 {
		t.Errorf("the demo should show at least two dialects, uses %d", len(dialects))
	}
	for id := range chunks {
		if !used[id] {
			t.Errorf("chunk %q is never retrieved", id)
		}
	}
}

// TestJudgeSeparatesRankings runs the demo's judge, builtin:lexical, over the
// corpus without a collector: every good ranking must beat its bad twin,
// clearly on average, and — so that the demo stays instructive — not every
// good ranking may be perfect.
func TestJudgeSeparatesRankings(t *testing.T) {
	j, err := config.NewJudge(config.Default().Judge, config.Cache{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	cp := func(q question, ids []string) float64 {
		res, err := j.Judge(context.Background(), judge.Request{Query: q.text, Reference: q.answer, Chunks: texts(ids)})
		if err != nil {
			t.Fatal(err)
		}
		vs := make([]bool, len(res.Verdicts))
		for i, v := range res.Verdicts {
			vs[i] = v.Relevant
		}
		s, ok := scoring.ContextualPrecision(vs, 0)
		if !ok {
			t.Fatalf("%q: no score", q.text)
		}
		return s.Value
	}
	var good, bad float64
	imperfect := 0
	for _, q := range questions {
		g, b := cp(q, q.good), cp(q, q.bad)
		t.Logf("good %.3f  bad %.3f  %s", g, b, q.text)
		if g <= b {
			t.Errorf("%q: good ranking scores %.3f, not above the bad one's %.3f", q.text, g, b)
		}
		if g < 1 {
			imperfect++
		}
		good += g
		bad += b
	}
	n := float64(len(questions))
	if good/n-bad/n < 0.4 {
		t.Errorf("mean CP good %.3f vs bad %.3f: want a gap of at least 0.4", good/n, bad/n)
	}
	if imperfect == 0 {
		t.Error("every good ranking scores 1.0; keep a near-miss or two so the demo shows a range")
	}
}
