package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/hotpotqa"
	"github.com/ragprecision/ragprecision/judge"
)

const sample = `{"question_id": "a", "question_text": "What government position was held by Shirley Temple?", "answers_objects": [{"spans": ["Chief of Protocol"]}],
 "contexts": [{"id": "0", "title": "Shirley Temple", "paragraph_text": "Shirley Temple served as Chief of Protocol of the United States.", "is_supporting": true},
              {"id": "1", "title": "Lord High Treasurer", "paragraph_text": "The Lord High Treasurer was an English government position.", "is_supporting": false}]}
{"question_id": "b", "question_text": "Is Kiss and Tell a film?", "answers_objects": [{"spans": ["yes"]}],
 "contexts": [{"id": "0", "title": "Janet Waldo", "paragraph_text": "Janet Waldo was a voice actress.", "is_supporting": false},
              {"id": "1", "title": "Kiss and Tell (1945 film)", "paragraph_text": "Kiss and Tell is a 1945 American comedy film.", "is_supporting": true}]}
`

func writeSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sample.jsonl")
	if err := os.WriteFile(path, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-data", writeSample(t), "-titles", "-by-type"}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		hotpotqa.Attribution,
		`chunks as "title: paragraph"`,
		"builtin:lexical", "naive@0.5",
		"all", "tune", "heldout", "yes/no", "other",
		"builtin:lexical vs naive@0.5 on all: F1 x",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// The lexical judge gets both toy questions right.
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[0] == "all" && f[2] == "builtin:lexical" && f[5] != "1.000" {
			t.Errorf("lexical F1 on the toy sample: %s", line)
		}
	}
}

func TestRunErrors(t *testing.T) {
	path := writeSample(t)
	for _, args := range [][]string{
		{"-data", path, "-split", "test"},
		{"-data", path, "extra"},
		{"-data", filepath.Join(t.TempDir(), "missing.jsonl")},
		{"-no-such-flag"},
	} {
		if err := run(context.Background(), args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

// TestRunSample runs the command on the real sample when it is available.
func TestRunSample(t *testing.T) {
	if _, err := hotpotqa.DefaultPath(); errors.Is(err, hotpotqa.ErrNotFound) {
		t.Skipf("HotpotQA sample not available: %v", err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-split", "heldout"}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "(500 questions)") || !strings.Contains(s, "heldout") || strings.Contains(s, "tune ") {
		t.Errorf("unexpected output:\n%s", s)
	}
}

// fakeJudge stands in for an LLM judge behind the judge package interface.
type fakeJudge struct {
	verdicts []judge.Verdict
	err      error
	got      judge.Request
}

func (f *fakeJudge) ID() string { return "fake:model" }

func (f *fakeJudge) Judge(_ context.Context, req judge.Request) (judge.Result, error) {
	f.got = req
	return judge.Result{Verdicts: f.verdicts}, f.err
}

func TestFromJudge(t *testing.T) {
	f := &fakeJudge{verdicts: []judge.Verdict{{Relevant: true}, {Relevant: false, Reason: "off topic"}}}
	got, err := fromJudge(context.Background(), f)("q", "r", []string{"a", "b"})
	if err != nil || !reflect.DeepEqual(got, []bool{true, false}) {
		t.Errorf("got %v, %v", got, err)
	}
	if want := (judge.Request{Query: "q", Reference: "r", Chunks: []string{"a", "b"}}); !reflect.DeepEqual(f.got, want) {
		t.Errorf("request %+v, want %+v", f.got, want)
	}
	f.err = errors.New("budget exhausted")
	if _, err := fromJudge(context.Background(), f)("q", "r", []string{"a", "b"}); err == nil {
		t.Error("error not propagated")
	}
}

func TestCandidates(t *testing.T) {
	cs, closeJudges, err := candidates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeJudges()
	baselines := 0
	for _, c := range cs {
		if c.Baseline {
			baselines++
		}
		if c.Judge == nil || c.Name == "" {
			t.Errorf("incomplete candidate %+v", c)
		}
	}
	if baselines != 1 {
		t.Errorf("%d baselines, want 1", baselines)
	}
}

// -judge evaluates an LLM judge through the real client, here against a
// local Chat Completions server that calls a paragraph relevant when it
// names the question's subject.
func TestRunWithLLMJudge(t *testing.T) {
	srv := chattest.NewServer(func(n int, r chattest.Request) chattest.Reply {
		word := "Shirley"
		if strings.Contains(r.Block("QUESTION"), "Kiss") {
			word = "Kiss and Tell"
		}
		return chattest.KeywordJudge(word)(n, r)
	})
	defer srv.Close()
	t.Setenv("EVAL_TEST_KEY", "sk-eval")
	var out bytes.Buffer
	err := run(context.Background(), []string{"-data", writeSample(t), "-split", "all",
		"-judge", "openai:eval-model", "-base-url", srv.URL, "-api-key-env", "EVAL_TEST_KEY"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "all" && f[2] == "openai:eval-model" {
			row = l
		}
	}
	// Both questions judged exactly right: precision, recall, F1 all 1.
	if f := strings.Fields(row); len(f) < 6 || f[3] != "1.000" || f[4] != "1.000" || f[5] != "1.000" {
		t.Fatalf("LLM judge row %q in\n%s", row, out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer sk-eval" || !reqs[0].Batched() {
		t.Fatalf("%d requests; first %+v", len(reqs), reqs[0].Header)
	}
}
