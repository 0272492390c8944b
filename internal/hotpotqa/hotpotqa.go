// Package hotpotqa reads the HotpotQA dev subsample used to benchmark
// relevance judges, as a source of labelled retrievals in the evalset format.
//
// Each question is one ranked retrieval (see ToRetrieval): the query is the
// question text, the reference is the gold short answer, the chunks are the
// candidate paragraphs in file order (with their titles) and the labels are
// the is_supporting flags: the two paragraphs a human marked as needed for
// the answer.
//
// The data is HotpotQA (Yang et al., 2018), licensed CC BY-SA 4.0, in the dev
// subsample published by the IRCoT authors. It is read from the shared data
// directory and never copied into this repository; keep Attribution next to
// any result reported on it.
package hotpotqa

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragprecision/ragprecision/internal/evalset"
)

// Attribution must accompany every result computed on this data.
const Attribution = "HotpotQA (Yang et al., 2018), CC BY-SA 4.0, IRCoT dev subsample"

// EnvPath names the environment variable that overrides DefaultPath.
const EnvPath = "RAGPRECISION_HOTPOTQA"

// FileName is the data file looked for under shared/data.
const FileName = "hotpotqa_dev500.jsonl"

// ErrNotFound is returned (wrapped) by DefaultPath when the data file cannot
// be located, so that tests can skip rather than fail.
var ErrNotFound = errors.New("hotpotqa data file not found")

// Context is one candidate paragraph of a question.
type Context struct {
	ID         string
	Title      string
	Text       string
	Supporting bool // human label: one of the gold supporting paragraphs
}

// Question is one labelled retrieval.
type Question struct {
	ID       string
	Text     string
	Answer   string // answers_objects[0].spans[0]
	Contexts []Context
}

// IsYesNo reports whether the gold answer is "yes" or "no". Such references
// carry no lexical signal, so results are reported for them separately.
func (q Question) IsYesNo() bool {
	a := strings.ToLower(strings.TrimSpace(q.Answer))
	return a == "yes" || a == "no"
}

// Chunks returns the chunk texts in rank (file) order. With titles each chunk
// is "title: paragraph", the shape many retrievers emit; otherwise it is the
// paragraph alone, which is the harder case for a lexical judge because the
// paragraph's subject is then only implicit in its first words.
func (q Question) Chunks(titles bool) []string {
	out := make([]string, len(q.Contexts))
	for i, c := range q.Contexts {
		if titles {
			out[i] = c.Title + ": " + c.Text
		} else {
			out[i] = c.Text
		}
	}
	return out
}

// Truth returns the human verdicts in rank order.
func (q Question) Truth() []bool {
	out := make([]bool, len(q.Contexts))
	for i, c := range q.Contexts {
		out[i] = c.Supporting
	}
	return out
}

// DefaultPath locates the data file: the path in $RAGPRECISION_HOTPOTQA when
// set, otherwise shared/data/hotpotqa_dev500.jsonl in the working directory or
// the nearest ancestor that has it (the repository and shared/ are siblings,
// and tests run in package directories). The error wraps ErrNotFound.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: $%s=%q: %v", ErrNotFound, EnvPath, p, err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	for dir := wd; ; {
		p := filepath.Join(dir, "shared", "data", FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("%w: no shared/data/%s above %s; set $%s", ErrNotFound, FileName, wd, EnvPath)
}

// record is the JSON shape of one line of the file.
type record struct {
	QuestionID     string `json:"question_id"`
	QuestionText   string `json:"question_text"`
	AnswersObjects []struct {
		Spans []string `json:"spans"`
	} `json:"answers_objects"`
	Contexts []struct {
		ID            string `json:"id"`
		Title         string `json:"title"`
		ParagraphText string `json:"paragraph_text"`
		IsSupporting  bool   `json:"is_supporting"`
	} `json:"contexts"`
}

// Load reads every question of a JSON-lines file in file order.
func Load(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	qs, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

// Decode reads every question of a stream of JSON objects.
func Decode(r io.Reader) ([]Question, error) {
	d := NewDecoder(r)
	var qs []Question
	for {
		q, err := d.Next()
		if err == io.EOF {
			return qs, nil
		}
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
}

// Decoder reads questions one at a time from a stream of JSON objects (one
// a line in the file, though any whitespace separation is accepted).
type Decoder struct {
	dec *json.Decoder
	n   int
}

// NewDecoder reads questions from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{dec: json.NewDecoder(r)} }

// Next returns the next question, or io.EOF after the last.
func (d *Decoder) Next() (Question, error) {
	d.n++
	var rec record
	if err := d.dec.Decode(&rec); err == io.EOF {
		return Question{}, io.EOF
	} else if err != nil {
		return Question{}, fmt.Errorf("record %d: %w", d.n, err)
	}
	if len(rec.AnswersObjects) == 0 || len(rec.AnswersObjects[0].Spans) == 0 {
		return Question{}, fmt.Errorf("record %d (%s): no answers_objects[0].spans[0]", d.n, rec.QuestionID)
	}
	q := Question{
		ID:       rec.QuestionID,
		Text:     rec.QuestionText,
		Answer:   rec.AnswersObjects[0].Spans[0],
		Contexts: make([]Context, len(rec.Contexts)),
	}
	for i, c := range rec.Contexts {
		q.Contexts[i] = Context{ID: c.ID, Title: c.Title, Text: c.ParagraphText, Supporting: c.IsSupporting}
	}
	return q, nil
}

// Types of question, as ToRetrieval sets Retrieval.Type.
const (
	TypeYesNo = "yes/no"
	TypeOther = "other"
)

// ToRetrieval is q in the evalset format: reference = the gold answer,
// chunks = the paragraphs in file order with their titles, labels =
// is_supporting, type = yes/no or other.
func ToRetrieval(q Question) evalset.Retrieval {
	r := evalset.Retrieval{ID: q.ID, Query: q.Text, Reference: q.Answer, Type: TypeOther,
		Chunks: make([]evalset.Chunk, len(q.Contexts))}
	if q.IsYesNo() {
		r.Type = TypeYesNo
	}
	for i, c := range q.Contexts {
		r.Chunks[i] = evalset.Chunk{ID: c.ID, Title: c.Title, Text: c.Text, Relevant: c.Supporting}
	}
	return r
}

// Source reads a HotpotQA file as an evalset.Source.
type Source struct{ d *Decoder }

// NewSource reads questions from r as retrievals.
func NewSource(r io.Reader) *Source { return &Source{d: NewDecoder(r)} }

// Next returns the next question as a retrieval, or io.EOF.
func (s *Source) Next() (evalset.Retrieval, error) {
	q, err := s.d.Next()
	if err != nil {
		return evalset.Retrieval{}, err
	}
	r := ToRetrieval(q)
	if err := r.Validate(); err != nil {
		return evalset.Retrieval{}, fmt.Errorf("record %d (%s): %w", s.d.n, q.ID, err)
	}
	return r, nil
}

// Split selects a deterministic half of the questions; see evalset.Split.
type Split = evalset.Split

// The splits.
const (
	All     = evalset.All
	Tune    = evalset.Tune
	HeldOut = evalset.HeldOut
)

// ParseSplit accepts "all", "tune" or "heldout".
func ParseSplit(s string) (Split, error) { return evalset.ParseSplit(s) }

// SplitOf assigns a question to Tune or HeldOut by a hash of its id.
func SplitOf(questionID string) Split { return evalset.SplitOf(questionID) }

// Select returns the questions of a split (all of them for All).
func Select(qs []Question, s Split) []Question {
	if s == All {
		return qs
	}
	var out []Question
	for _, q := range qs {
		if SplitOf(q.ID) == s {
			out = append(out, q)
		}
	}
	return out
}
