package evalset

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

const twoRetrievals = `# A comment line, then a blank one.

{"id": "a", "query": "Who is older, Ann or Bo?", "reference": "Bo", "type": "comparison", "chunks": [{"id": "p0", "title": "Ann", "text": "Ann was born in 1950.", "relevant": true}, {"text": "Cy was born in 1960.", "relevant": false}, {"title": "Bo", "text": "Bo was born in 1940.", "relevant": true}]}
{"query": "Is Cy a person?", "answer": "Yes, Cy is a person.", "split": "tune", "chunks": [{"text": "Dee is a river.", "relevant": false}, {"text": "Cy is a person.", "relevant": true}]}
`

// readAll drains a source.
func readAll(t *testing.T, src Source) []Retrieval {
	t.Helper()
	var out []Retrieval
	for {
		r, err := src.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func TestReader(t *testing.T) {
	rs := readAll(t, NewReader(strings.NewReader(twoRetrievals)))
	if len(rs) != 2 {
		t.Fatalf("%d retrievals, want 2", len(rs))
	}
	a, b := rs[0], rs[1]
	if a.ID != "a" || a.Type != "comparison" || a.Chunks[0].ID != "p0" || a.Chunks[0].Title != "Ann" {
		t.Errorf("first: %+v", a)
	}
	if b.ID != "4" {
		t.Errorf("a retrieval without id is named by its line: got %q, want 4", b.ID)
	}
	if got, want := a.Labels(), []bool{true, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v", got)
	}
	if got, want := a.Texts(true), []string{"Ann: Ann was born in 1950.", "Cy was born in 1960.", "Bo: Bo was born in 1940."}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts with titles %q", got)
	}
	if got := a.Texts(false)[0]; got != "Ann was born in 1950." {
		t.Errorf("texts without titles %q", got)
	}
	if ref, src := a.JudgeReference(); ref != "Bo" || src != SourceReference {
		t.Errorf("reference %q from %s", ref, src)
	}
	if ref, src := b.JudgeReference(); ref != "Yes, Cy is a person." || src != SourceAnswer {
		t.Errorf("answer %q from %s", ref, src)
	}
	if ref, src := (Retrieval{Query: "q"}).JudgeReference(); ref != "q" || src != SourceQuery {
		t.Errorf("query %q from %s", ref, src)
	}
	if b.HalfOf() != Tune || a.HalfOf() != SplitOf("a") {
		t.Errorf("halves: %s, %s", a.HalfOf(), b.HalfOf())
	}
}

func TestReaderErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"id": "x", "query": "q", "chunks": [{"text": "t", "label": true}]}`, `line 1: chunk 1: no "relevant" label`},
		{"\n" + `{"id": "x", "query": "q", "chunks": []}`, "line 2: no chunks"},
		{`{"id": "x", "chunks": [{"text": "t", "relevant": true}]}`, "line 1: none of query, reference and answer"},
		{`{"id": "x", "query": "q", "split": "test", "chunks": [{"text": "t", "relevant": true}]}`, `line 1: split: want "tune" or "heldout", got "test"`},
		{`{"id": "x", `, "line 1: unexpected end of JSON input"},
		{`[1, 2]`, "line 1: json: cannot unmarshal array"},
	} {
		_, err := NewReader(strings.NewReader(c.in)).Next()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Next(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
	if _, err := NewReader(strings.NewReader("")).Next(); err != io.EOF {
		t.Errorf("empty input: %v, want io.EOF", err)
	}
}

// A line far longer than any buffer is read whole.
func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("word ", 200000)
	in := `{"id": "long", "query": "q", "chunks": [{"text": "` + long + `", "relevant": true}]}` // no final newline
	r, err := NewReader(strings.NewReader(in)).Next()
	if err != nil || r.Chunks[0].Text != long {
		t.Fatalf("long line: %v", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	in := readAll(t, NewReader(strings.NewReader(twoRetrievals)))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Comment("converted <for a test> & more"); err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "# converted <for a test> & more\n") || strings.Contains(buf.String(), `\u003c`) {
		t.Errorf("output:\n%s", buf.String())
	}
	out := readAll(t, NewReader(&buf))
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the set:\n%+v\n%+v", in, out)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReaderIOError(t *testing.T) {
	if _, err := NewReader(failingReader{}).Next(); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("read error: %v", err)
	}
}
