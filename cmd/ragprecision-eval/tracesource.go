package main

import (
	"errors"
	"io"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/recording"
	"github.com/ragprecision/ragprecision/internal/spanreader"
)

// This file reads -traces: the retrieval spans of a recording (the OTLP JSON
// lines the collector's file exporter writes), read with the processor's
// own readers and configuration, become labelled retrievals whose labels
// are the verdicts recorded on them, judged again by the judge under
// evaluation.

// Why a span scored when recorded is not judged again.
const (
	skipUnrecognised  = "scored, but the readers do not recognise it as a retrieval (is -config the recording's?)"
	skipNoVerdicts    = "scored, but no verdicts recorded"
	skipBadVerdicts   = "recorded verdicts are not an array of booleans"
	skipTooLarge      = "too large for these limits (max_chunks, max_retrieval_bytes of -config)"
	skipNoChunks      = "no chunks readable"
	skipChunkCount    = "chunk count differs from the recorded verdicts' (top_k of -config?)"
	skipNoTraceAnswer = "judged against its trace's answer, which is not in the recording"
	skipNoReference   = "its recorded reference_source is not on the span"
	skipUnknownSource = "no reference_source recorded, or an unknown one"
)

// forEachSpan calls f with every span of td.
func forEachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				f(spans.At(k))
			}
		}
	}
}

// traceSource yields the scored retrieval spans of a recording as labelled
// retrievals: the chunks the processor's readers find, labelled with the
// verdicts recorded on them, the reference rebuilt from the recorded
// reference_source, the data source as the retrieval's type.
type traceSource struct {
	rd      *recording.Reader
	reader  *spanreader.Reader
	cfg     *config.Config
	answers map[pcommon.TraceID]*spanreader.JoinedAnswer
	stats   *recordingStats
	pending []evalset.Retrieval // the current line's, not yet yielded
}

// openTraces reads the recording files with cfg's readers. Spans judged
// against their trace's answer need that answer first: when the recording
// has any, it is read twice more before the judging starts (joinedAnswers).
func openTraces(files []string, cfg *config.Config) (*traceSource, error) {
	reader := config.NewSpanReader(cfg)
	answers, err := joinedAnswers(files, reader)
	if err != nil {
		return nil, err
	}
	return &traceSource{rd: recording.Open(files...), reader: reader, cfg: cfg, answers: answers,
		stats: newRecordingStats(files)}, nil
}

func (s *traceSource) close() error { return s.rd.Close() }

func (s *traceSource) Next() (evalset.Retrieval, error) {
	for len(s.pending) == 0 {
		td, err := s.rd.Next()
		if err == io.EOF {
			return evalset.Retrieval{}, io.EOF
		}
		if err := s.stats.line(err); err != nil {
			return evalset.Retrieval{}, err
		}
		if err != nil {
			continue
		}
		forEachSpan(td, func(span ptrace.Span) {
			s.stats.spans++
			if r, ok := s.retrieval(span); ok {
				s.pending = append(s.pending, r)
			}
		})
	}
	r := s.pending[0]
	s.pending[0] = evalset.Retrieval{}
	s.pending = s.pending[1:]
	return r, nil
}

// retrieval makes a labelled retrieval of a span scored when recorded, or
// counts why it cannot.
func (s *traceSource) retrieval(span ptrace.Span) (evalset.Retrieval, bool) {
	rec := recording.ResultOf(span)
	// The readers see the span as the processor saw it, before it wrote on
	// it (a span with a status is no candidate to them).
	recording.Strip(span)
	if !rec.Selected() {
		if _, ok := s.reader.Recognise(span); ok {
			s.stats.notSelected++
		}
		return evalset.Retrieval{}, false
	}
	if !rec.Scored() {
		s.stats.unscored[rec.Status]++
		return evalset.Retrieval{}, false
	}
	s.stats.scored++
	s.stats.judge(rec)
	skip := func(reason string) (evalset.Retrieval, bool) {
		s.stats.skipped[reason]++
		return evalset.Retrieval{}, false
	}
	dialect, ok := s.reader.Recognise(span)
	switch {
	case !ok:
		return skip(skipUnrecognised)
	case rec.BadVerdicts:
		return skip(skipBadVerdicts)
	case rec.Verdicts == nil:
		return skip(skipNoVerdicts)
	}
	ret, err := s.reader.Read(span, dialect)
	switch {
	case errors.Is(err, spanreader.ErrTooLarge):
		return skip(skipTooLarge)
	case err != nil:
		return skip(skipNoChunks)
	case len(ret.Chunks) != len(rec.Verdicts):
		return skip(skipChunkCount)
	}
	r := evalset.Retrieval{
		ID:    span.TraceID().String() + "/" + span.SpanID().String(),
		Query: ret.Query,
		Type:  spanreader.DataSource(span, s.cfg.Attributes.DataSource),
	}
	// JudgeReference takes the first of Reference, Answer and Query: only
	// the recorded source's field is set.
	switch rec.ReferenceSource {
	case config.SourceReference:
		r.Reference = ret.Reference
	case config.SourceAnswer:
		r.Answer = ret.Answer
		if r.Answer == "" {
			if a, ok := s.answers[span.TraceID()]; ok {
				r.Answer = a.Best()
			}
			if r.Answer == "" {
				return skip(skipNoTraceAnswer)
			}
		}
	case config.SourceQuery:
	default:
		return skip(skipUnknownSource)
	}
	if text, _ := r.JudgeReference(); text == "" {
		return skip(skipNoReference)
	}
	r.Chunks = make([]evalset.Chunk, len(ret.Chunks))
	for i, c := range ret.Chunks {
		r.Chunks[i] = evalset.Chunk{Text: c, Relevant: rec.Verdicts[i]}
	}
	return r, true
}

// joinedAnswers finds the answers of the traces whose retrieval spans were
// judged against them (trace_join): scored against an answer, and without
// one of their own. One pass finds those traces, a second gathers their
// answers as the processor does (spanreader.JoinedAnswer), from all the
// trace's spans wherever they are in the files; memory holds those traces'
// answers only. It returns nil when no span needs one, after one pass.
func joinedAnswers(files []string, reader *spanreader.Reader) (map[pcommon.TraceID]*spanreader.JoinedAnswer, error) {
	answers := map[pcommon.TraceID]*spanreader.JoinedAnswer{}
	err := eachSpan(files, func(span ptrace.Span) {
		rec := recording.ResultOf(span)
		if !rec.Scored() || rec.ReferenceSource != config.SourceAnswer {
			return
		}
		recording.Strip(span)
		d, ok := reader.Recognise(span)
		if !ok {
			return
		}
		if ret, err := reader.Read(span, d); err == nil && ret.Answer == "" {
			answers[span.TraceID()] = &spanreader.JoinedAnswer{}
		}
	})
	if err != nil || len(answers) == 0 {
		return nil, err
	}
	err = eachSpan(files, func(span ptrace.Span) {
		joined, ok := answers[span.TraceID()]
		if !ok {
			return
		}
		recording.Strip(span)
		a, ok := reader.TraceAnswer(span)
		if root := span.ParentSpanID().IsEmpty(); ok || root {
			joined.Observe(a.Text, root, a.End)
		}
	})
	return answers, err
}

// eachSpan calls f with every span of the files' good lines.
func eachSpan(files []string, f func(ptrace.Span)) error {
	rd := recording.Open(files...)
	defer rd.Close()
	var le *recording.LineError
	for {
		td, err := rd.Next()
		switch {
		case err == io.EOF:
			return nil
		case errors.As(err, &le):
			continue // counted by the judging pass
		case err != nil:
			return err
		}
		forEachSpan(td, f)
	}
}
