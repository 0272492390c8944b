// Package recording reads traffic the collector recorded: the OTLP JSON
// lines its file exporter writes (one ExportTraceServiceRequest per line),
// what the ragprecision processor wrote on each span it selected, and
// takes that off again so that the spans can be judged anew.
// ragprecision-eval -traces judges a recording offline, ragreplay sends
// one back through a collector (docs/OPERATING.md, "Replaying recorded
// traffic").
package recording

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// LineError is a line of a recording that is not OTLP JSON traces. Reading
// goes on with the next line.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// errNotJSON is a line that does not start a JSON object: the file exporter
// wrote it in another format.
var errNotJSON = errors.New("not an OTLP JSON object (the file exporter must write format: json, without compression)")

// Reader yields the lines of one or more recordings in order, one line in
// memory at a time.
type Reader struct {
	files []string
	next  int // index in files of the file after the open one
	f     io.ReadCloser
	br    *bufio.Reader
	name  string
	line  int
	buf   []byte
	um    ptrace.JSONUnmarshaler
}

// Files expands patterns (file names or globs, such as the rotated files
// of one recording, recorded-*.json) into file names, in order; a pattern
// that names no file is an error.
func Files(patterns ...string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if len(matches) == 0 {
			if _, err := os.Stat(p); err != nil {
				return nil, err
			}
			matches = []string{p}
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	if len(out) == 0 {
		return nil, errors.New("no recording named")
	}
	return out, nil
}

// Open reads the files, one after another. Each is opened when the one
// before it ends, so a missing file is reported when its turn comes;
// Files has checked that they exist.
func Open(files ...string) *Reader {
	return &Reader{files: files}
}

// NewReader reads one recording from r, called name in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{f: io.NopCloser(r), br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Next returns the traces of the next line. It returns a *LineError for a
// line that is not OTLP JSON traces, after which it may be called again,
// and io.EOF after the last line of the last file.
func (r *Reader) Next() (ptrace.Traces, error) {
	for {
		if r.br == nil {
			if err := r.openNext(); err != nil {
				return ptrace.Traces{}, err
			}
		}
		line, err := r.readLine()
		if err == io.EOF && len(line) == 0 {
			r.closeFile()
			if r.next >= len(r.files) {
				return ptrace.Traces{}, io.EOF
			}
			continue
		}
		if err != nil && err != io.EOF {
			return ptrace.Traces{}, fmt.Errorf("%s: after line %d: %w", r.name, r.line, err)
		}
		r.line++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return ptrace.Traces{}, &LineError{File: r.name, Line: r.line, Err: errNotJSON}
		}
		td, err := r.um.UnmarshalTraces(line)
		if err != nil {
			return ptrace.Traces{}, &LineError{File: r.name, Line: r.line, Err: err}
		}
		return td, nil
	}
}

// openNext opens the next file.
func (r *Reader) openNext() error {
	if r.next >= len(r.files) {
		return io.EOF
	}
	name := r.files[r.next]
	r.next++
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	r.f, r.br, r.name, r.line = f, bufio.NewReaderSize(f, 64<<10), name, 0
	return nil
}

// readLine returns the next line, however long, without its newline; the
// slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		if err != bufio.ErrBufferFull {
			if n := len(r.buf); n > 0 && r.buf[n-1] == '\n' {
				r.buf = r.buf[:n-1]
			}
			return r.buf, err
		}
	}
}

func (r *Reader) closeFile() {
	if r.f != nil {
		_ = r.f.Close()
	}
	r.f, r.br = nil, nil
}

// Close closes the file being read.
func (r *Reader) Close() error {
	r.closeFile()
	r.next = len(r.files)
	return nil
}
