package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
)

// countingSource yields n one-chunk retrievals and counts how many were read.
type countingSource struct {
	n, read int
	readAt  atomic.Int64
	failAt  int // return an error instead of this retrieval (1-based); 0: never
}

func (s *countingSource) Next() (evalset.Retrieval, error) {
	if s.read >= s.n {
		return evalset.Retrieval{}, io.EOF
	}
	s.read++
	s.readAt.Store(int64(s.read))
	if s.read == s.failAt {
		return evalset.Retrieval{}, errors.New("torn line")
	}
	return evalset.Retrieval{ID: fmt.Sprint(s.read), Query: "q", Chunks: []evalset.Chunk{{Text: "c", Relevant: true}}}, nil
}

var yes = candidate{name: "yes", judge: func(_ context.Context, req judge.Request) (judge.Result, error) {
	return judge.Result{Verdicts: make([]judge.Verdict, len(req.Chunks))}, nil
}}

// The pipeline reads only a bounded distance ahead of what it has handed
// on, so memory does not grow with the size of the data.
func TestJudgeStreamBoundedReadAhead(t *testing.T) {
	const concurrency = 3
	src := &countingSource{n: 1000}
	consumed, maxAhead := 0, int64(0)
	err := judgeStream(context.Background(), src, []candidate{yes}, false, concurrency, func(j judged) error {
		consumed++
		if want := fmt.Sprint(consumed); j.r.ID != want {
			return fmt.Errorf("consumed %s in position %s", j.r.ID, want)
		}
		maxAhead = max(maxAhead, src.readAt.Load()-int64(consumed))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if consumed != 1000 {
		t.Errorf("consumed %d of 1000", consumed)
	}
	// Read ahead of the one being consumed: the order buffer (which the
	// workers' retrievals are part of) and one in the reader's hand.
	if limit := int64(concurrency + 1); maxAhead > limit {
		t.Errorf("read %d retrievals ahead of the consumer, want at most %d", maxAhead, limit)
	}
}

func TestJudgeStreamErrors(t *testing.T) {
	src := &countingSource{n: 100, failAt: 10}
	consumed := 0
	err := judgeStream(context.Background(), src, []candidate{yes}, false, 4, func(judged) error { consumed++; return nil })
	if err == nil || !strings.Contains(err.Error(), "torn line") {
		t.Errorf("source error: %v", err)
	}
	if consumed != 9 {
		t.Errorf("consumed %d retrievals before the bad one, want 9", consumed)
	}

	src = &countingSource{n: 100}
	stop := errors.New("disk full")
	consumed = 0
	err = judgeStream(context.Background(), src, []candidate{yes}, false, 4, func(judged) error {
		consumed++
		if consumed == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || consumed != 5 || src.read == 100 {
		t.Errorf("consumer error: %v after %d consumed, %d read", err, consumed, src.read)
	}

	// Cancelling stops reading; what is in flight is not consumed.
	ctx, cancel := context.WithCancel(context.Background())
	src = &countingSource{n: 100}
	consumed = 0
	err = judgeStream(ctx, src, []candidate{yes}, false, 2, func(judged) error {
		consumed++
		if consumed == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || consumed != 3 || src.read == 100 {
		t.Errorf("cancelled: %v after %d consumed, %d read", err, consumed, src.read)
	}
}

// A judge that returns the wrong number of verdicts is broken: the run stops.
func TestRunStopsOnWrongVerdictCount(t *testing.T) {
	short := candidate{name: "short", judge: func(context.Context, judge.Request) (judge.Result, error) {
		return judge.Result{Verdicts: []judge.Verdict{{}}}, nil
	}}
	src := &countingSource{n: 1}
	tl := newTally(1, []evalset.Split{evalset.All}, false)
	err := judgeStream(context.Background(), sourceWithChunks{src, 2}, []candidate{short}, false, 1, tl.add)
	if err == nil || !strings.Contains(err.Error(), "returned 1 verdicts for the 2 chunks") {
		t.Errorf("got %v", err)
	}
}

// sourceWithChunks gives every retrieval of its source n chunks.
type sourceWithChunks struct {
	evalset.Source
	n int
}

func (s sourceWithChunks) Next() (evalset.Retrieval, error) {
	r, err := s.Source.Next()
	for len(r.Chunks) < s.n && err == nil {
		r.Chunks = append(r.Chunks, evalset.Chunk{Text: "more"})
	}
	return r, err
}

// Stages are counted per verdict, for the judges that report them.
func TestTallyStages(t *testing.T) {
	tl := newTally(2, []evalset.Split{evalset.All}, false)
	r := evalset.Retrieval{ID: "x", Query: "q", Chunks: []evalset.Chunk{{Text: "a"}, {Text: "b"}, {Text: "c"}, {Text: "d"}}}
	cascade := judge.Result{Verdicts: []judge.Verdict{{Stage: "lexical"}, {Stage: "llm"}, {Stage: "lexical"}, {Stage: "lexical"}}}
	plain := judge.Result{Verdicts: make([]judge.Verdict, 4)}
	if err := tl.add(judged{r: r, answers: []answer{{res: cascade}, {res: plain}}}); err != nil {
		t.Fatal(err)
	}
	if got := stageLine(tl.judges[0]); got != "lexical 75.0% (3), llm 25.0% (1)" {
		t.Errorf("stages %q", got)
	}
	if got := stageLine(tl.judges[1]); got != "" {
		t.Errorf("a judge without stages: %q", got)
	}
	var out bytes.Buffer
	cs := []candidate{{name: "cascade"}, {name: "plain"}}
	if err := printReport(&out, cs, tl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cascade verdicts by deciding stage: lexical 75.0% (3), llm 25.0% (1)") || strings.Contains(out.String(), "plain verdicts by") {
		t.Errorf("report:\n%s", out.String())
	}
}

// -by-type folds types beyond maxTypes together, so memory stays bounded.
func TestTallyTypesBounded(t *testing.T) {
	tl := newTally(1, []evalset.Split{evalset.All}, true)
	for i := range maxTypes + 5 {
		r := evalset.Retrieval{ID: fmt.Sprint(i), Query: "q", Type: fmt.Sprintf("type %d", i), Chunks: []evalset.Chunk{{Text: "a"}}}
		if err := tl.add(judged{r: r, answers: []answer{{res: judge.Result{Verdicts: []judge.Verdict{{}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(tl.types) != maxTypes {
		t.Errorf("%d types kept", len(tl.types))
	}
	if m := tl.judges[0].metrics(group{evalset.All, otherTypes}); m.Retrievals != 5 {
		t.Errorf("%d retrievals under %s, want 5", m.Retrievals, otherTypes)
	}
}

func TestProgress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var out bytes.Buffer
	p := newProgress(&out, 2*time.Second, clock)
	p.add(10, false)
	if out.Len() != 0 {
		t.Errorf("a line before the interval: %q", out.String())
	}
	now = now.Add(2 * time.Second)
	p.add(10, true)
	if got := out.String(); got != "ragprecision-eval: 2 retrievals (20 chunks) in 2s, 1.0 retrievals/s, 1 with a failed judgement\n" {
		t.Errorf("progress line %q", got)
	}
	out.Reset()
	now = now.Add(time.Second)
	p.add(10, false)
	if out.Len() != 0 {
		t.Errorf("a line a second after the last: %q", out.String())
	}
	p.done("done")
	if got := out.String(); got != "ragprecision-eval: done: 3 retrievals (30 chunks) in 3s, 1.0 retrievals/s, 1 with a failed judgement\n" {
		t.Errorf("final line %q", got)
	}
}

func TestKappaCell(t *testing.T) {
	var tl evalset.Tally
	_ = tl.Add([]bool{true, true}, []bool{true, true}) // both raters say yes to everything
	if got := kappa(tl.Metrics().Kappa); got != "n/a" {
		t.Errorf("undefined kappa printed as %q", got)
	}
	if got := kappa(0.4); got != "0.400" {
		t.Errorf("kappa 0.4 printed as %q", got)
	}
}
