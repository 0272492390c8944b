package evalset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TableReader reads a table of labelled chunks, one row per chunk, with a
// header naming the columns (case-insensitive, in any order):
//
//	query     (or question)   the user's question
//	reference                 an expected answer (optional column)
//	answer                    the generated answer (optional column)
//	chunk     (or document, text)   the retrieved text
//	label     (or relevant)   1/0, true/false, yes/no, relevant/irrelevant
//	id, title, type, split    as in the format (optional columns)
//
// Consecutive rows with the same id (or, without an id column, the same
// query, reference and answer) form one retrieval, their chunks in row order.
// Without an id column a retrieval is named L<line of its first row>.
type TableReader struct {
	rows   rowReader
	cols   map[string]int
	line   int      // line of the row in pending
	next   []string // a row read ahead: the first of the next retrieval
	nextAt int
	done   bool
}

// Table delimiters.
const (
	TSV = '\t'
	CSV = ','
)

// rowReader yields the rows of a table.
type rowReader interface {
	// read returns the next row and its line number, or io.EOF.
	read() ([]string, int, error)
}

// NewTableReader reads a table from r: CSV (RFC 4180 quoting) when delim is
// CSV, or TSV (fields split on tabs, no quoting) when it is TSV.
func NewTableReader(r io.Reader, delim rune) (*TableReader, error) {
	var rows rowReader
	switch delim {
	case CSV:
		c := csv.NewReader(r)
		rows = &csvRows{r: c}
	case TSV:
		rows = &tsvRows{r: bufio.NewReaderSize(r, 64<<10)}
	default:
		return nil, fmt.Errorf("delimiter %q: want tab or comma", delim)
	}
	header, _, err := rows.read()
	if err == io.EOF {
		return nil, errors.New("empty table: want a header row")
	}
	if err != nil {
		return nil, err
	}
	cols, err := tableColumns(header)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return &TableReader{rows: rows, cols: cols}, nil
}

// columnNames maps every accepted header name to its field.
var columnNames = map[string]string{
	"query": "query", "question": "query",
	"reference": "reference",
	"answer":    "answer",
	"chunk":     "chunk", "document": "chunk", "text": "chunk",
	"label": "label", "relevant": "label",
	"id": "id", "title": "title", "type": "type", "split": "split",
}

func tableColumns(header []string) (map[string]int, error) {
	cols := map[string]int{}
	var errs []error
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a byte-order mark, as spreadsheets write
		}
		field, ok := columnNames[name]
		if !ok {
			continue // other columns are the user's business
		}
		if _, dup := cols[field]; dup {
			errs = append(errs, fmt.Errorf("two columns for %s", field))
		}
		cols[field] = i
	}
	for _, need := range []string{"chunk", "label"} {
		if _, ok := cols[need]; !ok {
			errs = append(errs, fmt.Errorf("no %s column", need))
		}
	}
	_, hasID := cols["id"]
	_, hasQuery := cols["query"]
	if !hasID && !hasQuery {
		errs = append(errs, errors.New("no query (or id) column to group rows by"))
	}
	return cols, errors.Join(errs...)
}

func (t *TableReader) field(row []string, name string) string {
	i, ok := t.cols[name]
	if !ok || i >= len(row) {
		return ""
	}
	return row[i]
}

// key is what consecutive rows of one retrieval share.
func (t *TableReader) key(row []string) string {
	if _, ok := t.cols["id"]; ok {
		return t.field(row, "id")
	}
	return t.field(row, "query") + "\x00" + t.field(row, "reference") + "\x00" + t.field(row, "answer")
}

// Next returns the next retrieval.
func (t *TableReader) Next() (Retrieval, error) {
	if t.next == nil && !t.done {
		row, line, err := t.rows.read()
		if err == io.EOF {
			t.done = true
		} else if err != nil {
			return Retrieval{}, err
		} else {
			t.next, t.nextAt = row, line
		}
	}
	if t.next == nil {
		return Retrieval{}, io.EOF
	}
	first, firstLine := t.next, t.nextAt
	r := Retrieval{
		ID:        t.field(first, "id"),
		Query:     t.field(first, "query"),
		Reference: t.field(first, "reference"),
		Answer:    t.field(first, "answer"),
		Type:      t.field(first, "type"),
		Split:     Split(strings.TrimSpace(t.field(first, "split"))),
	}
	if r.ID == "" {
		r.ID = "L" + strconv.Itoa(firstLine)
	}
	key := t.key(first)
	row, line := first, firstLine
	for {
		label, err := ParseLabel(t.field(row, "label"))
		if err != nil {
			return Retrieval{}, fmt.Errorf("line %d: %w", line, err)
		}
		r.Chunks = append(r.Chunks, Chunk{Title: t.field(row, "title"), Text: t.field(row, "chunk"), Relevant: label})
		row, line, err = t.rows.read()
		if err == io.EOF {
			t.next, t.done = nil, true
			break
		}
		if err != nil {
			return Retrieval{}, err
		}
		if t.key(row) != key {
			t.next, t.nextAt = row, line
			break
		}
	}
	if err := r.Validate(); err != nil {
		return Retrieval{}, fmt.Errorf("line %d: %w", firstLine, err)
	}
	return r, nil
}

// ParseLabel reads a relevance label: 1, true, yes, y or relevant for
// relevant; 0, false, no, n or irrelevant (also not_relevant) for not,
// in any case.
func ParseLabel(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "relevant":
		return true, nil
	case "0", "false", "no", "n", "irrelevant", "not_relevant", "not relevant":
		return false, nil
	}
	return false, fmt.Errorf("label %q: want 1/0, true/false, yes/no or relevant/irrelevant", s)
}

type csvRows struct{ r *csv.Reader }

func (c *csvRows) read() ([]string, int, error) {
	row, err := c.r.Read()
	if err != nil {
		return nil, 0, err
	}
	line, _ := c.r.FieldPos(0)
	return row, line, nil
}

type tsvRows struct {
	r    *bufio.Reader
	line int
}

func (t *tsvRows) read() ([]string, int, error) {
	for {
		raw, err := t.r.ReadString('\n')
		if raw == "" && err != nil {
			return nil, 0, err
		}
		t.line++
		raw = strings.TrimRight(raw, "\r\n")
		if raw == "" {
			continue
		}
		return strings.Split(raw, "\t"), t.line, nil
	}
}
