// Package evalset is the labelled-retrieval format ragprecision-eval reads,
// and what is needed to measure a judge on it: readers (the format itself,
// and tables of query, chunk and label), transforms (a split, the
// single-chunk version of a set, a limit), agreement metrics (precision,
// recall, F1, Cohen's kappa, the error in Contextual Precision) and the naive
// baseline every judge is compared with.
//
// The format is JSON Lines: one retrieval per line, its chunks in rank
// order, each with a human relevance label. docs/EVAL_FORMAT.md describes it
// for users; Retrieval and Chunk below are the field-by-field reference.
//
// Everything streams: a reader holds one retrieval at a time, so a set of any
// size is measured in constant memory.
package evalset

import (
	"errors"
	"fmt"
)

// Chunk is one retrieved text with its human label.
type Chunk struct {
	// ID names the chunk in reports; optional.
	ID string `json:"id,omitempty"`
	// Title is shown to the judge as "title: text" with -titles; optional.
	Title string `json:"title,omitempty"`
	// Text is what the retriever returned.
	Text string `json:"text"`
	// Relevant is the human label: the chunk helps to arrive at the
	// reference. Required on every chunk, so that a misspelt key cannot
	// silently label a whole set irrelevant.
	Relevant bool `json:"relevant"`
}

// Retrieval is one labelled retrieval: a line of the format.
type Retrieval struct {
	// ID names the retrieval in reports and decides its split (see SplitOf).
	// Readers number retrievals that have none.
	ID string `json:"id"`
	// Query is the user's question.
	Query string `json:"query,omitempty"`
	// Reference is an expected answer, what the processor's
	// reference_sources calls "reference".
	Reference string `json:"reference,omitempty"`
	// Answer is the answer the application generated, used when there is
	// no Reference (the processor's "answer").
	Answer string `json:"answer,omitempty"`
	// Type is a free category reported separately with -by-type, e.g.
	// "yes/no" questions; optional.
	Type string `json:"type,omitempty"`
	// Split is "tune" or "heldout" to place the retrieval in a half
	// explicitly; empty means the half given by a hash of ID.
	Split Split `json:"split,omitempty"`
	// Chunks are the retrieved chunks in rank order; at least one.
	Chunks []Chunk `json:"chunks"`
}

// Reference sources, as the processor names them.
const (
	SourceReference = "reference"
	SourceAnswer    = "answer"
	SourceQuery     = "query"
)

// JudgeReference is what each chunk is judged against, and where it came
// from: the first non-empty of Reference, Answer and Query, as the processor
// does with reference_sources [reference, answer, query].
func (r Retrieval) JudgeReference() (text, source string) {
	switch {
	case r.Reference != "":
		return r.Reference, SourceReference
	case r.Answer != "":
		return r.Answer, SourceAnswer
	default:
		return r.Query, SourceQuery
	}
}

// Texts returns the chunk texts in rank order; with titles, a chunk that has
// a title is presented as "title: text", the shape many retrievers emit.
func (r Retrieval) Texts(titles bool) []string {
	out := make([]string, len(r.Chunks))
	for i, c := range r.Chunks {
		if titles && c.Title != "" {
			out[i] = c.Title + ": " + c.Text
		} else {
			out[i] = c.Text
		}
	}
	return out
}

// Labels returns the human verdicts in rank order.
func (r Retrieval) Labels() []bool {
	out := make([]bool, len(r.Chunks))
	for i, c := range r.Chunks {
		out[i] = c.Relevant
	}
	return out
}

// HalfOf is the split the retrieval belongs to: Split when set, else
// SplitOf(ID).
func (r Retrieval) HalfOf() Split {
	if r.Split != "" {
		return r.Split
	}
	return SplitOf(r.ID)
}

// Validate reports what makes r unusable for measuring a judge.
func (r Retrieval) Validate() error {
	var errs []error
	if len(r.Chunks) == 0 {
		errs = append(errs, errors.New("no chunks"))
	}
	if r.Query == "" && r.Reference == "" && r.Answer == "" {
		errs = append(errs, errors.New("none of query, reference and answer is set"))
	}
	switch r.Split {
	case "", Tune, HeldOut:
	default:
		errs = append(errs, fmt.Errorf("split: want %q or %q, got %q", Tune, HeldOut, r.Split))
	}
	return errors.Join(errs...)
}
