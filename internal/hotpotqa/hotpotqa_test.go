package hotpotqa

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// loadAll loads the shared sample, skipping the test when it is absent.
func loadAll(t *testing.T) []Question {
	t.Helper()
	path, err := DefaultPath()
	if errors.Is(err, ErrNotFound) {
		t.Skipf("HotpotQA sample not available (set $%s or put it in ../shared/data): %v", EnvPath, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	qs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func TestLoadSample(t *testing.T) {
	qs := loadAll(t)
	if len(qs) != 500 {
		t.Fatalf("%d questions, want 500", len(qs))
	}
	ids := map[string]bool{}
	yesNo := 0
	for _, q := range qs {
		if q.ID == "" || q.Text == "" || q.Answer == "" || len(q.Contexts) == 0 {
			t.Fatalf("incomplete question %+v", q)
		}
		if ids[q.ID] {
			t.Fatalf("duplicate id %s", q.ID)
		}
		ids[q.ID] = true
		supporting := 0
		for _, c := range q.Contexts {
			if c.Supporting {
				supporting++
			}
		}
		if supporting != 2 {
			t.Errorf("%s: %d supporting paragraphs, want 2", q.ID, supporting)
		}
		if q.IsYesNo() {
			yesNo++
		}
	}
	if yesNo != 80 {
		t.Errorf("%d yes/no questions, want 80", yesNo)
	}
	// The check value of docs/EVAL_FORMAT.md: CP of the human verdicts in file order.
	if got := TrueMeanCP(qs); math.Abs(got-0.3844) > 5e-5 {
		t.Errorf("mean true CP %.6f, want 0.3844", got)
	}
	// Evaluating the human verdicts themselves must be perfect.
	truth := map[string][]bool{}
	for _, q := range qs {
		truth[q.Text] = q.Truth()
	}
	r, err := Evaluate(qs, func(query, _ string, chunks []string) ([]bool, error) {
		return truth[query], nil
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.All; m.F1 != 1 || m.Accuracy != 1 || m.CPMAE != 0 || m.MeanJudgedCP != m.MeanTrueCP {
		t.Errorf("oracle judge: %+v", m)
	}
}

func TestSplitSample(t *testing.T) {
	qs := loadAll(t)
	tune, held := Select(qs, Tune), Select(qs, HeldOut)
	if len(tune)+len(held) != len(qs) {
		t.Fatalf("tune %d + heldout %d != %d", len(tune), len(held), len(qs))
	}
	if len(tune) < 200 || len(held) < 200 {
		t.Errorf("unbalanced split: tune %d, heldout %d", len(tune), len(held))
	}
	if len(Select(qs, All)) != len(qs) {
		t.Error("All does not select everything")
	}
}

func TestSplitOfIsStable(t *testing.T) {
	// Pinned so that the halves never silently change.
	tests := map[string]Split{
		"5a8c7595554299585d9e36b6": HeldOut,
		"5a85ea095542994775f606a8": HeldOut,
		"5abd94525542992ac4f382d2": Tune,
	}
	for id, want := range tests {
		if got := SplitOf(id); got != want {
			t.Errorf("SplitOf(%s) = %s, want %s", id, got, want)
		}
	}
	for _, s := range []string{"all", "tune", "heldout"} {
		if got, err := ParseSplit(s); err != nil || string(got) != s {
			t.Errorf("ParseSplit(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseSplit("test"); err == nil {
		t.Error("ParseSplit accepted an unknown split")
	}
}

const twoQuestions = `{"question_id": "a", "question_text": "Who is older, Ann or Bo?", "answers_objects": [{"spans": ["Bo"]}],
 "contexts": [{"id": "0", "title": "Ann", "paragraph_text": "Ann was born in 1950.", "is_supporting": true},
              {"id": "1", "title": "Cy", "paragraph_text": "Cy was born in 1960.", "is_supporting": false},
              {"id": "2", "title": "Bo", "paragraph_text": "Bo was born in 1940.", "is_supporting": true}]}
{"question_id": "b", "question_text": "Is Cy a person?", "answers_objects": [{"spans": ["yes"]}],
 "contexts": [{"id": "0", "title": "Dee", "paragraph_text": "Dee is a river.", "is_supporting": false},
              {"id": "1", "title": "Cy", "paragraph_text": "Cy is a person.", "is_supporting": true}]}
`

func TestDecode(t *testing.T) {
	qs, err := Decode(strings.NewReader(twoQuestions))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "a" || qs[0].Answer != "Bo" || len(qs[0].Contexts) != 3 || !qs[1].IsYesNo() || qs[0].IsYesNo() {
		t.Fatalf("decoded %+v", qs)
	}
	if got, want := qs[0].Chunks(false), []string{"Ann was born in 1950.", "Cy was born in 1960.", "Bo was born in 1940."}; !reflect.DeepEqual(got, want) {
		t.Errorf("Chunks(false) = %q", got)
	}
	if got, want := qs[0].Chunks(true)[1], "Cy: Cy was born in 1960."; got != want {
		t.Errorf("Chunks(true)[1] = %q, want %q", got, want)
	}
	if got, want := qs[0].Truth(), []bool{true, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("Truth() = %v", got)
	}

	for _, bad := range []string{
		`{"question_id": "x", "answers_objects": [], "contexts": []}`,
		`{"question_id": "x", "answers_objects": [{"spans": []}], "contexts": []}`,
		`{"question_id": "x", `,
		`[1, 2]`,
	} {
		if _, err := Decode(strings.NewReader(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
	if qs, err := Decode(strings.NewReader("")); err != nil || len(qs) != 0 {
		t.Errorf("empty input: %v, %v", qs, err)
	}
}

func TestDefaultPathEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sample.jsonl")
	if err := os.WriteFile(file, []byte(twoQuestions), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPath, file)
	if got, err := DefaultPath(); err != nil || got != file {
		t.Errorf("DefaultPath() = %q, %v; want %q", got, err, file)
	}
	qs, err := Load(file)
	if err != nil || len(qs) != 2 {
		t.Errorf("Load: %d questions, %v", len(qs), err)
	}
	t.Setenv(EnvPath, filepath.Join(dir, "missing.jsonl"))
	if _, err := DefaultPath(); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: err = %v, want ErrNotFound", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestDefaultPathWalksUp(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "shared", "data")
	pkg := filepath.Join(root, "main", "internal", "hotpotqa")
	for _, d := range []string{data, pkg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(data, FileName)
	if err := os.WriteFile(file, []byte(twoQuestions), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPath, "")
	t.Chdir(pkg)
	got, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	// Compare resolved paths: the temporary directory may be a symlink.
	gotR, _ := filepath.EvalSymlinks(got)
	wantR, _ := filepath.EvalSymlinks(file)
	if gotR != wantR {
		t.Errorf("DefaultPath() = %q, want %q", got, file)
	}
}

func TestEvaluate(t *testing.T) {
	qs, err := Decode(strings.NewReader(twoQuestions))
	if err != nil {
		t.Fatal(err)
	}
	// CP of the truth: q a = [1 0 1] → (1 + 2/3)/2 = 5/6; q b = [0 1] → 1/2.
	trueCP := (5.0/6 + 0.5) / 2
	if got := TrueMeanCP(qs); math.Abs(got-trueCP) > 1e-12 {
		t.Fatalf("TrueMeanCP = %v, want %v", got, trueCP)
	}

	firstOnly := func(_, _ string, chunks []string) ([]bool, error) {
		out := make([]bool, len(chunks))
		out[0] = true
		return out, nil
	}
	r, err := Evaluate(qs, firstOnly, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Judged [1 0 0] and [1 0]: TP 1, FP 1, FN 2, TN 1.
	m := r.All
	if m.Retrievals != 2 || m.Chunks != 5 || m.TP != 1 || m.FP != 1 || m.FN != 2 || m.TN != 1 {
		t.Fatalf("counts %+v", m)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("precision", m.Precision, 0.5)
	near("recall", m.Recall, 1.0/3)
	near("F1", m.F1, 0.4)
	near("accuracy", m.Accuracy, 0.4)
	// CP judged: 1 and 1 → |1 - 5/6| = 1/6, |1 - 1/2| = 1/2.
	near("CP MAE", m.CPMAE, (1.0/6+0.5)/2)
	near("mean judged CP", m.MeanJudgedCP, 1)
	near("mean true CP", m.MeanTrueCP, trueCP)
	if r.YesNo.Retrievals != 1 || r.Other.Retrievals != 1 {
		t.Errorf("yes/no split: %d / %d", r.YesNo.Retrievals, r.Other.Retrievals)
	}
	near("yes/no CP MAE", r.YesNo.CPMAE, 0.5)
	near("other CP MAE", r.Other.CPMAE, 1.0/6)

	none := func(_, _ string, chunks []string) ([]bool, error) { return make([]bool, len(chunks)), nil }
	r, _ = Evaluate(qs, none, Options{})
	if m := r.All; m.Precision != 0 || m.Recall != 0 || m.F1 != 0 || m.MeanJudgedCP != 0 {
		t.Errorf("nothing relevant: %+v", m)
	}

	failing := func(query, _ string, chunks []string) ([]bool, error) {
		if strings.HasPrefix(query, "Is") {
			return nil, errors.New("upstream timeout")
		}
		return make([]bool, len(chunks)), nil
	}
	r, err = Evaluate(qs, failing, Options{})
	if err != nil || r.Failed != 1 || r.FirstError == nil || r.All.Retrievals != 1 {
		t.Errorf("failing judge: %+v, %v", r, err)
	}

	short := func(_, _ string, _ []string) ([]bool, error) { return []bool{true}, nil }
	if _, err := Evaluate(qs, short, Options{}); err == nil {
		t.Error("wrong number of verdicts accepted")
	}

	var seen []string
	spy := func(_, _ string, chunks []string) ([]bool, error) {
		seen = append(seen, chunks[0])
		return make([]bool, len(chunks)), nil
	}
	if _, err := Evaluate(qs[:1], spy, Options{Titles: true}); err != nil || seen[0] != "Ann: Ann was born in 1950." {
		t.Errorf("titles option: judge saw %q", seen)
	}
}

func TestSource(t *testing.T) {
	src := NewSource(strings.NewReader(twoQuestions))
	a, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "a" || a.Query != "Who is older, Ann or Bo?" || a.Reference != "Bo" || a.Answer != "" || a.Type != TypeOther {
		t.Errorf("first retrieval %+v", a)
	}
	if c := a.Chunks[2]; c.ID != "2" || c.Title != "Bo" || c.Text != "Bo was born in 1940." || !c.Relevant {
		t.Errorf("third chunk %+v", c)
	}
	if got, want := a.Labels(), []bool{true, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v", got)
	}
	b, err := src.Next()
	if err != nil || b.Type != TypeYesNo {
		t.Errorf("second retrieval %+v, %v", b, err)
	}
	if _, err := src.Next(); err != io.EOF {
		t.Errorf("after the last: %v", err)
	}
	noContexts := `{"question_id": "x", "question_text": "q", "answers_objects": [{"spans": ["a"]}], "contexts": []}`
	if _, err := NewSource(strings.NewReader(noContexts)).Next(); err == nil || !strings.Contains(err.Error(), "no chunks") {
		t.Errorf("question without paragraphs: %v", err)
	}
}
