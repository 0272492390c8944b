package main

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/scoring"
)

// spanResult is one line of -out: what one judge made of one retrieval,
// next to its labels.
type spanResult struct {
	ID string `json:"id"`
	// Split is the retrieval's half; none for a recorded span.
	Split evalset.Split `json:"split,omitempty"`
	Type  string        `json:"type,omitempty"`
	Judge string        `json:"judge"`
	Query string        `json:"query"`
	// ReferenceSource says what the chunks were judged against.
	ReferenceSource string   `json:"reference_source"`
	Labels          []bool   `json:"labels"`
	Verdicts        []bool   `json:"verdicts,omitempty"`
	Reasons         []string `json:"reasons,omitempty"`
	// Stages are the deciding stages of a cascade judge, when it says.
	Stages   []string `json:"stages,omitempty"`
	CPTrue   float64  `json:"cp_true"`
	CPJudged *float64 `json:"cp_judged,omitempty"`
	// Error is why the judge gave no verdicts.
	Error string `json:"error,omitempty"`
}

// resultWriter writes -out, one JSON object per line, in data order.
type resultWriter struct {
	w     *bufio.Writer
	enc   *json.Encoder
	close func() error // of the file under w
	// recorded: the retrievals are recorded spans (-traces), which have no
	// half.
	recorded bool
}

func newResultWriter(w io.Writer) *resultWriter {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &resultWriter{w: bw, enc: enc}
}

// write records candidate's answer about j.
func (rw *resultWriter) write(j judged, judgeName string, a answer) error {
	labels := j.r.Labels()
	out := spanResult{
		ID: j.r.ID, Type: j.r.Type, Judge: judgeName, Query: j.r.Query,
		ReferenceSource: j.source, Labels: labels, CPTrue: cp(labels),
	}
	if !rw.recorded {
		out.Split = j.r.HalfOf()
	}
	if a.err != nil {
		out.Error = a.err.Error()
		return rw.enc.Encode(out)
	}
	out.Verdicts = relevance(a.res.Verdicts)
	judgedCP := cp(out.Verdicts)
	out.CPJudged = &judgedCP
	anyReason, otherStage := false, false
	out.Reasons = make([]string, len(a.res.Verdicts))
	out.Stages = make([]string, len(a.res.Verdicts))
	for i, v := range a.res.Verdicts {
		out.Reasons[i], out.Stages[i] = v.Reason, v.Stage
		anyReason = anyReason || v.Reason != ""
		// Only a cascade has a stage other than the judge itself.
		otherStage = otherStage || (out.Stages[i] != "" && out.Stages[i] != judgeName)
	}
	if !anyReason {
		out.Reasons = nil
	}
	if !otherStage {
		out.Stages = nil
	}
	return rw.enc.Encode(out)
}

// finish writes out what is buffered and closes the file.
func (rw *resultWriter) finish() error {
	if err := rw.w.Flush(); err != nil {
		return err
	}
	if rw.close != nil {
		return rw.close()
	}
	return nil
}

// cp is the Contextual Precision of verdicts over all ranks (0 for none).
func cp(verdicts []bool) float64 {
	s, _ := scoring.ContextualPrecision(verdicts, 0)
	return s.Value
}
