package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
)

// judged is one retrieval with every candidate's answer, in candidate order.
type judged struct {
	r         evalset.Retrieval
	reference string // what the chunks were judged against
	source    string // where it came from: reference, answer or query
	answers   []answer
}

// answer is one candidate's judgement of one retrieval.
type answer struct {
	res  judge.Result
	err  error
	took time.Duration
}

// judgeStream judges every retrieval of src with every candidate, up to
// concurrency retrievals at a time, and hands the results to consume in the
// order src yielded them, so that reports and -out are the same however
// the requests interleave. At most concurrency+2 retrievals are held at
// once (the one being consumed, those read ahead, one in the reader's
// hand), whatever the size of src.
//
// It stops at the first error of src or consume, or when ctx ends, and
// returns that error after the retrievals in flight have finished; their
// results are not consumed.
func judgeStream(ctx context.Context, src evalset.Source, cs []candidate, titles bool, concurrency int,
	consume func(judged) error) error {
	concurrency = max(concurrency, 1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	type job struct {
		j    judged
		done chan judged // buffered: a worker never waits for the consumer
	}
	work := make(chan job)
	order := make(chan job, concurrency) // bounds the retrievals read ahead

	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range work {
				jb.done <- judgeOne(ctx, jb.j, cs, titles)
			}
		}()
	}

	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		for ctx.Err() == nil {
			r, err := src.Next()
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			ref, source := r.JudgeReference()
			jb := job{j: judged{r: r, reference: ref, source: source}, done: make(chan judged, 1)}
			select {
			case order <- jb:
			case <-ctx.Done():
				return
			}
			select {
			case work <- jb:
			case <-ctx.Done():
				return
			}
		}
	}()

	var consumeErr error
	for jb := range order {
		var j judged
		select {
		case j = <-jb.done:
		case <-ctx.Done():
		}
		if consumeErr != nil || ctx.Err() != nil {
			continue // drain, so that the reader can finish
		}
		if err := consume(j); err != nil {
			consumeErr = err
			cancel(err)
		}
	}
	wg.Wait()
	// order is closed only after the reader returned, so readErr is set.
	switch {
	case consumeErr != nil:
		return consumeErr
	case readErr != nil:
		return readErr
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return nil
}

// judgeOne asks every candidate about one retrieval, one after another.
func judgeOne(ctx context.Context, j judged, cs []candidate, titles bool) judged {
	req := judge.Request{Query: j.r.Query, Reference: j.reference, Chunks: j.r.Texts(titles)}
	j.answers = make([]answer, len(cs))
	for i, c := range cs {
		start := time.Now()
		res, err := c.judge(ctx, req)
		j.answers[i] = answer{res: res, err: err, took: time.Since(start)}
	}
	return j
}

// judgeInto judges src with cs into t, and into results when -out is set,
// showing progress on stderr, then prints the report on stdout;
// interrupted says that ctx ended it before src did.
func judgeInto(ctx context.Context, src evalset.Source, cs []candidate, titles bool, concurrency int,
	t *tally, results *resultWriter, progressEvery time.Duration, stdout, stderr io.Writer) (interrupted bool, err error) {
	p := newProgress(stderr, progressEvery, time.Now)
	err = judgeStream(ctx, src, cs, titles, concurrency, func(j judged) error {
		if err := t.add(j); err != nil {
			return err
		}
		if results != nil {
			if err := results.write(j, cs[0].name, j.answers[0]); err != nil {
				return fmt.Errorf("-out: %w", err)
			}
		}
		failed := false
		for _, a := range j.answers {
			failed = failed || a.err != nil
		}
		p.add(len(j.r.Chunks), failed)
		return nil
	})
	interrupted = err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return false, err
	}
	if interrupted {
		p.done("interrupted")
	} else {
		p.done("done")
	}
	if results != nil {
		if err := results.finish(); err != nil {
			return interrupted, fmt.Errorf("-out: %w", err)
		}
	}
	return interrupted, printReport(stdout, cs, t)
}
