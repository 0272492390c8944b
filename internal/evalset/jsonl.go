package evalset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Source yields retrievals one at a time, in order.
type Source interface {
	// Next returns the next retrieval, or io.EOF after the last one.
	Next() (Retrieval, error)
}

// Reader reads the format: one JSON object per line. Empty lines and lines
// starting with # are skipped, so that a file can say what it is.
type Reader struct {
	r    *bufio.Reader
	line int
}

// NewReader reads retrievals from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// wireChunk is Chunk as decoded: Relevant is a pointer so that a missing
// label is an error, not false.
type wireChunk struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	Relevant *bool  `json:"relevant"`
}

type wireRetrieval struct {
	ID        string      `json:"id"`
	Query     string      `json:"query"`
	Reference string      `json:"reference"`
	Answer    string      `json:"answer"`
	Type      string      `json:"type"`
	Split     Split       `json:"split"`
	Chunks    []wireChunk `json:"chunks"`
}

// Next returns the next retrieval. A retrieval without an id is given its
// line number. Errors name the line.
func (d *Reader) Next() (Retrieval, error) {
	for {
		raw, err := d.r.ReadBytes('\n')
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				return Retrieval{}, io.EOF
			}
			return Retrieval{}, fmt.Errorf("after line %d: %w", d.line, err)
		}
		d.line++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] == '#' {
			continue
		}
		r, err := decodeLine(raw)
		if err != nil {
			return Retrieval{}, fmt.Errorf("line %d: %w", d.line, err)
		}
		if r.ID == "" {
			r.ID = strconv.Itoa(d.line)
		}
		return r, nil
	}
}

func decodeLine(raw []byte) (Retrieval, error) {
	var w wireRetrieval
	if err := json.Unmarshal(raw, &w); err != nil {
		return Retrieval{}, err
	}
	r := Retrieval{ID: w.ID, Query: w.Query, Reference: w.Reference, Answer: w.Answer, Type: w.Type, Split: w.Split,
		Chunks: make([]Chunk, len(w.Chunks))}
	var errs []error
	for i, c := range w.Chunks {
		if c.Relevant == nil {
			errs = append(errs, fmt.Errorf("chunk %d: no \"relevant\" label (true or false)", i+1))
			continue
		}
		r.Chunks[i] = Chunk{ID: c.ID, Title: c.Title, Text: c.Text, Relevant: *c.Relevant}
	}
	errs = append(errs, r.Validate())
	if err := errors.Join(errs...); err != nil {
		return Retrieval{}, err
	}
	return r, nil
}

// Writer writes the format, one retrieval per line.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewWriter writes to w; call Flush when done.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false) // chunks are read by people too: keep <, > and & as they are
	return &Writer{w: bw, enc: enc}
}

// Comment writes a line starting with "# ", which readers skip.
func (w *Writer) Comment(text string) error {
	_, err := w.w.WriteString("# " + text + "\n")
	return err
}

// Write writes one retrieval on one line.
func (w *Writer) Write(r Retrieval) error { return w.enc.Encode(r) }

// Flush writes out what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }
