package recording

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// line is one span of the given name as the file exporter writes it.
func line(t *testing.T, names ...string) string {
	t.Helper()
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, n := range names {
		spans.AppendEmpty().SetName(n)
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readAll returns the span names of every good line, and the line errors.
func readAll(t *testing.T, r *Reader) (names []string, bad []*LineError) {
	t.Helper()
	for {
		td, err := r.Next()
		if err == io.EOF {
			return names, bad
		}
		var le *LineError
		if errors.As(err, &le) {
			bad = append(bad, le)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < spans.Len(); i++ {
			names = append(names, spans.At(i).Name())
		}
	}
}

// Good lines are read in order; blank lines are skipped; a bad line, one in
// another format and a last line cut short are reported with their line
// numbers, and reading goes on.
func TestReaderLines(t *testing.T) {
	long := line(t, strings.Repeat("x", 200<<10)) // longer than the read buffer
	text := line(t, "a", "b") + "\n\n" + `{"resourceSpans": [` + "\n" + line(t, "c") + "\n" +
		"\x00\x00\x01proto\n" + long + "\n" + line(t, "d")[:20]
	r := NewReader(strings.NewReader(text), "rec.json")
	names, bad := readAll(t, r)
	if got := strings.Join(names, ","); got != "a,b,c,"+strings.Repeat("x", 200<<10) {
		t.Fatalf("spans %.40q", got)
	}
	if len(bad) != 3 || bad[0].Line != 3 || bad[1].Line != 5 || bad[2].Line != 7 {
		t.Fatalf("bad lines %v", bad)
	}
	if !errors.Is(bad[1], errNotJSON) || !strings.Contains(bad[1].Error(), "rec.json:5: ") || !strings.Contains(bad[1].Error(), "format: json") {
		t.Fatalf("a line in another format: %v", bad[1])
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}

// Files expands globs in order, and refuses a name that matches nothing;
// Open reads the files one after another, naming each in its errors.
func TestFilesAndOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("rec-2.json", line(t, "second")+"\n")
	write("rec-1.json", line(t, "first")+"\nnope\n")
	last := write("last.json", line(t, "last"))
	files, err := Files(filepath.Join(dir, "rec-*.json"), last)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || filepath.Base(files[0]) != "rec-1.json" || files[2] != last {
		t.Fatalf("files %v", files)
	}
	names, bad := readAll(t, Open(files...))
	if strings.Join(names, ",") != "first,second,last" {
		t.Fatalf("spans %v", names)
	}
	if len(bad) != 1 || bad[0].File != files[0] || bad[0].Line != 2 {
		t.Fatalf("bad lines %v", bad)
	}
	if _, err := Files(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("a missing file is accepted")
	}
	if _, err := Files(); err == nil {
		t.Fatal("no file is accepted")
	}
}
