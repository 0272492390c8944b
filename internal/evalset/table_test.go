package evalset

import (
	"strings"
	"testing"
)

func TestTableTSV(t *testing.T) {
	in := "Question\tReference\tDocument\tLabel\tsource\n" +
		"Who is older?\tBo\tAnn was born in 1950.\t1\twiki\n" +
		"Who is older?\tBo\tCy was born in 1960.\t0\twiki\n" +
		"\n" +
		"Is Cy a person?\tyes\tCy is a person.\tyes\twiki\n" +
		"Who is older?\tBo\tBo was born in 1940.\tTRUE\twiki\n"
	tr, err := NewTableReader(strings.NewReader(in), TSV)
	if err != nil {
		t.Fatal(err)
	}
	rs := readAll(t, tr)
	if len(rs) != 3 {
		t.Fatalf("%d retrievals, want 3 (rows group only while consecutive): %+v", len(rs), rs)
	}
	if r := rs[0]; r.ID != "L2" || r.Query != "Who is older?" || r.Reference != "Bo" || len(r.Chunks) != 2 ||
		!r.Chunks[0].Relevant || r.Chunks[1].Relevant || r.Chunks[1].Text != "Cy was born in 1960." {
		t.Errorf("first retrieval %+v", r)
	}
	if r := rs[1]; r.ID != "L5" || len(r.Chunks) != 1 || !r.Chunks[0].Relevant {
		t.Errorf("second retrieval %+v", r)
	}
	if r := rs[2]; r.ID != "L6" {
		t.Errorf("third retrieval %+v", r)
	}
}

func TestTableCSV(t *testing.T) {
	in := "\ufeffid,query,chunk,title,label,type\n" +
		`q1,"Who wrote ""Dune""?","Frank Herbert wrote Dune, in 1965.",Dune,relevant,book` + "\n" +
		"q1,ignored: the id groups,\"A sandworm,\nwith a newline.\",Worms,irrelevant,book\n" +
		"q2,Another?,Text.,,n,\n"
	tr, err := NewTableReader(strings.NewReader(in), CSV)
	if err != nil {
		t.Fatal(err)
	}
	rs := readAll(t, tr)
	if len(rs) != 2 {
		t.Fatalf("%d retrievals, want 2: %+v", len(rs), rs)
	}
	r := rs[0]
	if r.ID != "q1" || r.Query != `Who wrote "Dune"?` || r.Type != "book" || len(r.Chunks) != 2 ||
		r.Chunks[0].Title != "Dune" || r.Chunks[1].Text != "A sandworm,\nwith a newline." || !r.Chunks[0].Relevant || r.Chunks[1].Relevant {
		t.Errorf("first retrieval %+v", r)
	}
	if rs[1].ID != "q2" || rs[1].Chunks[0].Relevant {
		t.Errorf("second retrieval %+v", rs[1])
	}
}

func TestTableErrors(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"", "empty table"},
		{"query\tlabel\n", "no chunk column"},
		{"chunk\tlabel\n", "no query (or id) column"},
		{"query\tchunk\tdocument\tlabel\n", "two columns for chunk"},
	} {
		if _, err := NewTableReader(strings.NewReader(c.in), TSV); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("header %q: %v, want %q", c.in, err, c.want)
		}
	}
	tr, err := NewTableReader(strings.NewReader("query\tchunk\tlabel\nq\tt\t1\nq\tu\tmaybe\n"), TSV)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); err == nil || !strings.Contains(err.Error(), `line 3: label "maybe"`) {
		t.Errorf("bad label: %v", err)
	}
	if _, err := NewTableReader(strings.NewReader("x"), ';'); err == nil {
		t.Error("unknown delimiter accepted")
	}
}

func TestParseLabel(t *testing.T) {
	for in, want := range map[string]bool{"1": true, " Yes ": true, "TRUE": true, "relevant": true, "y": true,
		"0": false, "No": false, "false": false, "irrelevant": false, "not_relevant": false} {
		if got, err := ParseLabel(in); err != nil || got != want {
			t.Errorf("ParseLabel(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "2", "maybe"} {
		if _, err := ParseLabel(in); err == nil {
			t.Errorf("ParseLabel(%q) accepted", in)
		}
	}
}
