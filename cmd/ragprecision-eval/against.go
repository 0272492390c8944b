package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/internal/recording"
	"github.com/ragprecision/ragprecision/internal/spanreader"
	"github.com/ragprecision/ragprecision/judge"
)

// This file is -against: two recordings of the same spans compared, the
// verdicts of -traces (what a replay through a collector with a candidate
// judge wrote) against those of -against (the recording replayed), span by
// span, matched by trace and span ID. Nothing is judged.

// Why a span scored in -traces is not compared.
const (
	skipNotInAgainst     = "not selected in -against (not in it, or not sampled when recorded)"
	skipAgainstUnscored  = "not scored in -against"
	skipAgainstNoVerdict = "no verdicts in -against, or not an array of booleans"
)

// spanKey is a span's trace and span ID.
type spanKey [24]byte

func keyOf(span ptrace.Span) spanKey {
	var k spanKey
	tid, sid := span.TraceID(), span.SpanID()
	copy(k[:16], tid[:])
	copy(k[16:], sid[:])
	return k
}

// againstSpan is what -against recorded on a span it selected.
type againstSpan struct {
	status   string
	verdicts []bool // nil when none, or malformed
	seen     bool   // matched by a span of -traces
}

// againstIndex is every span -against selected, by key: the one recording
// held in memory, a few dozen bytes a span.
type againstIndex struct {
	spans  map[spanKey]int
	list   []againstSpan
	stats  *recordingStats
	status map[string]string // interned statuses
}

// indexRecording reads the spans a recording selected.
func indexRecording(files []string) (*againstIndex, error) {
	idx := &againstIndex{spans: map[spanKey]int{}, stats: newRecordingStats(files), status: map[string]string{}}
	rd := recording.Open(files...)
	defer rd.Close()
	for {
		td, err := rd.Next()
		if err == io.EOF {
			return idx, nil
		}
		if err := idx.stats.line(err); err != nil {
			return nil, fmt.Errorf("-against: %w", err)
		}
		if err != nil {
			continue
		}
		forEachSpan(td, func(span ptrace.Span) {
			idx.stats.spans++
			rec := recording.ResultOf(span)
			if !rec.Selected() {
				return
			}
			k := keyOf(span)
			if _, dup := idx.spans[k]; dup {
				return // sent twice (a retried export): the first counts
			}
			st, ok := idx.status[rec.Status]
			if !ok && len(idx.status) < 64 {
				st = rec.Status
				idx.status[st] = st
			}
			if rec.Scored() {
				idx.stats.scored++
				idx.stats.judge(rec)
			}
			idx.spans[k] = len(idx.list)
			idx.list = append(idx.list, againstSpan{status: st, verdicts: rec.Verdicts})
		})
	}
}

// unmatched counts the spans scored in -against that -traces never had.
func (idx *againstIndex) unmatched() int {
	n := 0
	for _, s := range idx.list {
		if !s.seen && s.status == ragattr.StatusScored {
			n++
		}
	}
	return n
}

// compareRecordings compares the verdicts of files with those of against.
func compareRecordings(ctx context.Context, stdout io.Writer, files, against []string, cfg *config.Config, cfgName string, o options) error {
	idx, err := indexRecording(against)
	if err != nil {
		return err
	}
	results, err := openResults(o.out)
	if err != nil {
		return err
	}
	if results != nil {
		results.recorded = true
		defer results.close() // after finish, a no-op
	}
	fmt.Fprintf(stdout, "Data: the verdicts recorded in %s against those in %s, span by span; read as %s\n\n",
		strings.Join(files, ", "), strings.Join(against, ", "), cfgName)

	reader := config.NewSpanReader(cfg)
	st := newRecordingStats(files)
	t := newTally(1, []evalset.Split{evalset.All}, true)
	t.recorded, t.compared = true, true
	name := func() string {
		if len(st.judges) == 1 {
			for j := range st.judges {
				return j.model
			}
		}
		return "the judges of -traces"
	}
	var pending []judged
	rd := recording.Open(files...)
	defer rd.Close()
	for ctx.Err() == nil && (o.limit <= 0 || t.judges[0].retrievals < o.limit) {
		td, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err := st.line(err); err != nil {
			return fmt.Errorf("-traces: %w", err)
		}
		if err != nil {
			continue
		}
		pending = pending[:0]
		forEachSpan(td, func(span ptrace.Span) {
			st.spans++
			if j, ok := compareSpan(span, idx, st, reader, cfg); ok {
				pending = append(pending, j)
			}
		})
		for _, j := range pending {
			if o.limit > 0 && t.judges[0].retrievals >= o.limit {
				break
			}
			if err := t.add(j); err != nil {
				return err
			}
			if results != nil {
				if err := results.write(j, name(), j.answers[0]); err != nil {
					return fmt.Errorf("-out: %w", err)
				}
			}
		}
	}
	if results != nil {
		if err := results.finish(); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
	}
	cs := []candidate{{name: name()}}
	if err := printReport(stdout, cs, t); err != nil {
		return err
	}
	compared := t.judges[0].retrievals
	describeRecording(stdout, st, compared)
	fmt.Fprintf(stdout, "Verdicts in -traces: %s\nVerdicts in -against: %s\n", recordedJudges(st), recordedJudges(idx.stats))
	if idx.stats.badLines > 0 {
		fmt.Fprintf(stdout, "-against: %d lines are not OTLP JSON traces and were left out (first: %v)\n", idx.stats.badLines, idx.stats.firstBad)
	}
	if n := idx.unmatched(); n > 0 && o.limit <= 0 && ctx.Err() == nil {
		fmt.Fprintf(stdout, "%d spans scored in -against are not in -traces: the replay lost them, or did not select them\n", n)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the figures above cover only the spans compared so far", errInterrupted)
	}
	if compared == 0 {
		return errors.New("no span scored in both recordings")
	}
	return nil
}

// compareSpan pairs a span of -traces with its recording in -against, or
// counts why it cannot.
func compareSpan(span ptrace.Span, idx *againstIndex, st *recordingStats, reader *spanreader.Reader, cfg *config.Config) (judged, bool) {
	rec := recording.ResultOf(span)
	if !rec.Selected() {
		if _, ok := reader.Recognise(span); ok {
			st.notSelected++
		}
		return judged{}, false
	}
	i, inAgainst := idx.spans[keyOf(span)]
	if inAgainst {
		idx.list[i].seen = true
	}
	if !rec.Scored() {
		st.unscored[rec.Status]++
		return judged{}, false
	}
	st.scored++
	st.judge(rec)
	skip := func(reason string) (judged, bool) {
		st.skipped[reason]++
		return judged{}, false
	}
	switch {
	case rec.BadVerdicts:
		return skip(skipBadVerdicts)
	case rec.Verdicts == nil:
		return skip(skipNoVerdicts)
	case !inAgainst:
		return skip(skipNotInAgainst)
	}
	a := idx.list[i]
	switch {
	case a.status != ragattr.StatusScored:
		return skip(fmt.Sprintf("%s (%s)", skipAgainstUnscored, a.status))
	case a.verdicts == nil:
		return skip(skipAgainstNoVerdict)
	case len(a.verdicts) != len(rec.Verdicts):
		return skip(skipChunkCount)
	}
	r := evalset.Retrieval{
		ID:     span.TraceID().String() + "/" + span.SpanID().String(),
		Type:   spanreader.DataSource(span, cfg.Attributes.DataSource),
		Chunks: make([]evalset.Chunk, len(a.verdicts)),
	}
	verdicts := make([]judge.Verdict, len(rec.Verdicts))
	for k := range a.verdicts {
		r.Chunks[k].Relevant = a.verdicts[k]
		verdicts[k].Relevant = rec.Verdicts[k]
	}
	return judged{r: r, source: rec.ReferenceSource, answers: []answer{{res: judge.Result{Verdicts: verdicts}}}}, true
}
