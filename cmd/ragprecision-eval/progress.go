package main

import (
	"fmt"
	"io"
	"time"
)

// progress reports on stderr how far a run has got: a line every interval,
// with the rate, and one at the end. It is driven by the consumer, so it
// needs no goroutine of its own; a line is due when a retrieval finishes
// after the interval has passed.
type progress struct {
	w        io.Writer
	interval time.Duration
	now      func() time.Time

	start, last        time.Time
	retrievals, chunks int
	failed             int
}

func newProgress(w io.Writer, interval time.Duration, now func() time.Time) *progress {
	t := now()
	return &progress{w: w, interval: interval, now: now, start: t, last: t}
}

// add counts one retrieval judged by every candidate; failed reports
// whether any of them failed on it.
func (p *progress) add(chunks int, failed bool) {
	p.retrievals++
	p.chunks += chunks
	if failed {
		p.failed++
	}
	if p.interval <= 0 {
		return
	}
	if t := p.now(); t.Sub(p.last) >= p.interval {
		p.last = t
		fmt.Fprintf(p.w, "ragprecision-eval: %s\n", p.status(t))
	}
}

// done writes the final line.
func (p *progress) done(what string) {
	fmt.Fprintf(p.w, "ragprecision-eval: %s: %s\n", what, p.status(p.now()))
}

func (p *progress) status(t time.Time) string {
	elapsed := t.Sub(p.start)
	rate := "-"
	if elapsed > 0 {
		rate = fmt.Sprintf("%.1f", float64(p.retrievals)/elapsed.Seconds())
	}
	s := fmt.Sprintf("%d retrievals (%d chunks) in %s, %s retrievals/s", p.retrievals, p.chunks, elapsed.Round(time.Millisecond), rate)
	if p.failed > 0 {
		s += fmt.Sprintf(", %d with a failed judgement", p.failed)
	}
	return s
}
