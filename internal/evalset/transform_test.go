package evalset

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// set returns a source of n retrievals with ids r0..r(n-1), each with two
// relevant chunks among five.
func set(n int) Source {
	var rs []Retrieval
	for i := range n {
		r := Retrieval{ID: fmt.Sprintf("r%d", i), Query: "q", Reference: "a", Type: "t"}
		for k := range 5 {
			r.Chunks = append(r.Chunks, Chunk{Text: fmt.Sprintf("r%d chunk %d", i, k+1), Relevant: k == 1 || k == 3})
		}
		rs = append(rs, r)
	}
	return sliceSource(rs)
}

func sliceSource(rs []Retrieval) Source {
	return sourceFunc(func() (Retrieval, error) {
		if len(rs) == 0 {
			return Retrieval{}, io.EOF
		}
		r := rs[0]
		rs = rs[1:]
		return r, nil
	})
}

func TestSingleChunk(t *testing.T) {
	rs := readAll(t, SingleChunk(set(400)))
	if len(rs) != 400 {
		t.Fatalf("%d retrievals, want one per original", len(rs))
	}
	relevant := 0
	ranks := map[string]int{}
	for i, r := range rs {
		if len(r.Chunks) != 1 {
			t.Fatalf("%s: %d chunks", r.ID, len(r.Chunks))
		}
		orig := fmt.Sprintf("r%d", i)
		if !strings.HasPrefix(r.ID, orig+"#") || r.Query != "q" || r.Reference != "a" || r.Type != "t" {
			t.Fatalf("retrieval %d: %+v", i, r)
		}
		if r.HalfOf() != SplitOf(orig) {
			t.Errorf("%s left its original's split", r.ID)
		}
		// Alternating: even positions relevant, odd ones not.
		if r.Chunks[0].Relevant != (i%2 == 0) {
			t.Errorf("retrieval %d: relevant = %v", i, r.Chunks[0].Relevant)
		}
		if r.Chunks[0].Relevant {
			relevant++
		}
		// The id names the chunk's rank, and the rank matches the text.
		rank := r.ID[len(orig)+1:]
		if want := fmt.Sprintf("%s chunk %s", orig, rank); r.Chunks[0].Text != want {
			t.Errorf("%s holds %q", r.ID, r.Chunks[0].Text)
		}
		ranks[rank]++
	}
	if relevant != 200 {
		t.Errorf("%d of 400 relevant, want 200", relevant)
	}
	// Every chunk of each kind gets picked: 2 and 4 among the relevant, 1, 3
	// and 5 among the others, none of them starved.
	for _, rank := range []string{"1", "2", "3", "4", "5"} {
		if ranks[rank] < 30 {
			t.Errorf("rank %s picked %d times: %v", rank, ranks[rank], ranks)
		}
	}
	// Deterministic.
	again := readAll(t, SingleChunk(set(400)))
	for i := range rs {
		if rs[i].ID != again[i].ID {
			t.Fatalf("second pass differs at %d: %s vs %s", i, rs[i].ID, again[i].ID)
		}
	}
}

func TestSingleChunkFallsBack(t *testing.T) {
	allIrrelevant := Retrieval{ID: "x", Query: "q", Chunks: []Chunk{{Text: "a"}, {Text: "b"}}}
	rs := readAll(t, SingleChunk(sliceSource([]Retrieval{allIrrelevant})))
	if len(rs) != 1 || rs[0].Chunks[0].Relevant {
		t.Errorf("got %+v", rs)
	}
	if _, err := SingleChunk(sliceSource([]Retrieval{{ID: "empty", Query: "q"}})).Next(); err == nil {
		t.Error("a retrieval without chunks accepted")
	}
}

func TestOnlySplitAndLimit(t *testing.T) {
	all := readAll(t, set(100))
	tune := readAll(t, OnlySplit(set(100), Tune))
	held := readAll(t, OnlySplit(set(100), HeldOut))
	if len(tune)+len(held) != len(all) || len(tune) < 30 || len(held) < 30 {
		t.Fatalf("tune %d + heldout %d of %d", len(tune), len(held), len(all))
	}
	for _, r := range tune {
		if r.HalfOf() != Tune {
			t.Errorf("%s in tune", r.ID)
		}
	}
	if n := len(readAll(t, OnlySplit(set(10), All))); n != 10 {
		t.Errorf("All kept %d of 10", n)
	}
	if n := len(readAll(t, Limit(set(10), 3))); n != 3 {
		t.Errorf("Limit 3 gave %d", n)
	}
	if n := len(readAll(t, Limit(set(10), 0))); n != 10 {
		t.Errorf("Limit 0 gave %d", n)
	}
	// Limit stops reading: a source that fails after 2 is fine with Limit 2.
	failing := sourceFunc(func() func() (Retrieval, error) {
		n := 0
		return func() (Retrieval, error) {
			n++
			if n > 2 {
				return Retrieval{}, fmt.Errorf("read past the limit")
			}
			return Retrieval{ID: "x"}, nil
		}
	}())
	if n := len(readAll(t, Limit(failing, 2))); n != 2 {
		t.Errorf("Limit 2 gave %d", n)
	}
}

func TestParseSplitAndSplitOf(t *testing.T) {
	for _, s := range []string{"all", "tune", "heldout"} {
		if got, err := ParseSplit(s); err != nil || string(got) != s {
			t.Errorf("ParseSplit(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseSplit("test"); err == nil {
		t.Error("ParseSplit accepted an unknown split")
	}
	// Pinned: the halves builtin:lexical was tuned on must never move.
	for id, want := range map[string]Split{
		"5a8c7595554299585d9e36b6": HeldOut,
		"5a85ea095542994775f606a8": HeldOut,
		"5abd94525542992ac4f382d2": Tune,
	} {
		if got := SplitOf(id); got != want {
			t.Errorf("SplitOf(%s) = %s, want %s", id, got, want)
		}
	}
	if !All.Contains(Tune) || !Tune.Contains(Tune) || Tune.Contains(HeldOut) {
		t.Error("Contains")
	}
}
