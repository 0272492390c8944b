package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/hotpotqa"
)

// hotpotSample is two questions in the HotpotQA file format.
const hotpotSample = `{"question_id": "a", "question_text": "What government position was held by Shirley Temple?", "answers_objects": [{"spans": ["Chief of Protocol"]}],
 "contexts": [{"id": "0", "title": "Shirley Temple", "paragraph_text": "Shirley Temple served as Chief of Protocol of the United States.", "is_supporting": true},
              {"id": "1", "title": "Lord High Treasurer", "paragraph_text": "The Lord High Treasurer was an English government position.", "is_supporting": false}]}
{"question_id": "b", "question_text": "Is Kiss and Tell a film?", "answers_objects": [{"spans": ["yes"]}],
 "contexts": [{"id": "0", "title": "Janet Waldo", "paragraph_text": "Janet Waldo was a voice actress.", "is_supporting": false},
              {"id": "1", "title": "Kiss and Tell (1945 film)", "paragraph_text": "Kiss and Tell is a 1945 American comedy film.", "is_supporting": true}]}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runEval runs the command and returns stdout and stderr.
func runEval(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// row returns the fields of the report row for split and judge.
func row(t *testing.T, out, split, judgeName string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == split && f[2] == judgeName {
			return f
		}
	}
	t.Fatalf("no %s row for %s in\n%s", split, judgeName, out)
	return nil
}

// Columns of a report row.
const (
	colRetrievals = 1
	colPrecision  = 3
	colRecall     = 4
	colF1         = 5
	colKappa      = 6
	colCPMAE      = 8
)

func TestRunHotpotQAFile(t *testing.T) {
	out, stderr, err := runEval(t, "-data", writeFile(t, "sample.jsonl", hotpotSample), "-titles", "-by-type")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"hotpotqa format", hotpotqa.Attribution, `chunks shown as "title: text"`,
		"builtin:lexical", "naive@0.5", "kappa",
		"all yes/no", "all other", "tune", "heldout",
		"builtin:lexical vs naive@0.5 on all: F1 x",
		"requests/retrieval",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The lexical judge gets both toy questions right.
	if f := row(t, out, "all", "builtin:lexical"); f[colRetrievals] != "2" || f[colF1] != "1.000" || f[colKappa] != "1.000" || f[colCPMAE] != "0.000" {
		t.Errorf("lexical on the toy sample: %v", f)
	}
	if !strings.Contains(stderr, "done: 2 retrievals (4 chunks)") {
		t.Errorf("no final progress line on stderr: %q", stderr)
	}
}

func TestRunErrors(t *testing.T) {
	path := writeFile(t, "sample.jsonl", hotpotSample)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", path, "-split", "test"}, "unknown split"},
		{[]string{"-data", path, "extra"}, "unexpected arguments"},
		{[]string{"-data", filepath.Join(t.TempDir(), "missing.jsonl")}, "no such file"},
		{[]string{"-no-such-flag"}, "not defined"},
		{[]string{"-data", path, "-concurrency", "0"}, "-concurrency"},
		{[]string{"-data", path, "-format", "xml"}, `-format "xml"`},
		{[]string{"-data", writeFile(t, "odd.jsonl", `{"question": "q"}`)}, "cannot tell its format"},
		{[]string{"-data", path, "-judge", "opneai:gpt-4o"}, `unknown provider "opneai"`},
		{[]string{"-data", path, "-judge", "openai:gpt-4o-mini", "-api-key-env", "EVAL_TEST_NO_SUCH_KEY"}, "$EVAL_TEST_NO_SUCH_KEY"},
		{[]string{"-data", writeFile(t, "bad.jsonl", "{\"id\": \"x\", \"query\": \"q\", \"chunks\": [{\"text\": \"t\"}]}\n")}, `bad.jsonl: line 1: chunk 1: no "relevant" label`},
		{[]string{"-data", writeFile(t, "empty.jsonl", "# nothing\n{\"chunks\": []}\n"), "-format", "retrievals", "-split", "tune"}, "line 2: no chunks"},
	} {
		if _, _, err := runEval(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestRunSample runs the command on the real sample when it is available,
// and pins the figures docs/JUDGES.md quotes.
func TestRunSample(t *testing.T) {
	if _, err := hotpotqa.DefaultPath(); errors.Is(err, hotpotqa.ErrNotFound) {
		t.Skipf("HotpotQA sample not available: %v", err)
	}
	out, _, err := runEval(t)
	if err != nil {
		t.Fatal(err)
	}
	if f := row(t, out, "all", "builtin:lexical"); f[colRetrievals] != "500" || f[colPrecision] != "0.773" || f[colRecall] != "0.866" || f[colF1] != "0.817" || f[colCPMAE] != "0.071" {
		t.Errorf("docs/JUDGES.md figures moved: %v", f)
	}
	if f := row(t, out, "heldout", "builtin:lexical"); f[colRetrievals] != "246" || f[colF1] != "0.800" || f[colCPMAE] != "0.070" {
		t.Errorf("docs/JUDGES.md held-out figures moved: %v", f)
	}
	// A half of the single-chunk version is the same judged alone or not.
	both, _, err := runEval(t, "-single-chunk")
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := runEval(t, "-single-chunk", "-split", "heldout")
	if err != nil {
		t.Fatal(err)
	}
	a, b := row(t, both, "heldout", "builtin:lexical"), row(t, alone, "heldout", "builtin:lexical")
	if a[colRetrievals] != "246" || strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("single-chunk held-out: %v with the other half, %v alone", a, b)
	}
}

// TestRunBuiltInSet is `make eval` in a fresh clone: no HotpotQA sample, so
// the handbook set shipped in testdata is measured, and the user is told
// where to get HotpotQA.
func TestRunBuiltInSet(t *testing.T) {
	t.Setenv(hotpotqa.EnvPath, filepath.Join(t.TempDir(), "absent.jsonl"))
	out, stderr, err := runEval(t)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "github.com/StonyBrookNLP/ircot") || !strings.Contains(stderr, "$"+hotpotqa.EnvPath) {
		t.Errorf("stderr does not say where to get HotpotQA:\n%s", stderr)
	}
	if !strings.Contains(out, handbookName) {
		t.Errorf("report does not name the built-in set:\n%s", out)
	}
	n := 0
	for r := evalset.NewReader(bytes.NewReader(handbookSet)); ; n++ {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if f := row(t, out, "all", "builtin:lexical"); f[colRetrievals] != fmt.Sprint(n) {
		t.Errorf("measured %s retrievals of %d", f[colRetrievals], n)
	}
}

// labelJudge answers like an LLM judge that knows the labels: a chunk is
// relevant to a question when labels[labelKey(question, chunk)] says so, in
// per_chunk and batched mode, reporting 100 prompt and 10 completion tokens
// per chunk.
func labelJudge(labels map[string]bool) chattest.Handler {
	return func(_ int, r chattest.Request) chattest.Reply {
		verdict := func(chunk string) string {
			if labels[labelKey(r.Block("QUESTION"), chunk)] {
				return "yes"
			}
			return "no"
		}
		if r.Batched() {
			var items []string
			for _, c := range r.Chunks() {
				items = append(items, fmt.Sprintf(`{"verdict":%q,"reason":"the label says %s"}`, verdict(c), verdict(c)))
			}
			return chattest.Reply{Content: `{"verdicts":[` + strings.Join(items, ",") + `]}`,
				PromptTokens: 100 * len(items), CompletionTokens: 10 * len(items)}
		}
		v := verdict(r.Block("CHUNK"))
		return chattest.Reply{Content: fmt.Sprintf(`{"verdict":%q,"reason":"the label says %s"}`, v, v), PromptTokens: 100, CompletionTokens: 10}
	}
}

// labelKey is what a label is looked up by: the same chunk can be relevant
// to one question and not to another.
func labelKey(question, chunk string) string { return question + "\x00" + chunk }

// labelsOf maps every question and chunk text of a set to its label.
func labelsOf(t *testing.T, set string) map[string]bool {
	t.Helper()
	labels := map[string]bool{}
	r := evalset.NewReader(strings.NewReader(set))
	for {
		ret, err := r.Next()
		if err != nil {
			return labels
		}
		for _, c := range ret.Chunks {
			labels[labelKey(ret.Query, c.Text)] = c.Relevant
		}
	}
}

// TestRunWithLLMJudge measures an LLM judge through the real client against
// a local Chat Completions server that answers from the labels: agreement
// must be perfect, and the cost is what the server reported.
func TestRunWithLLMJudge(t *testing.T) {
	set := string(handbookSet)
	srv := chattest.NewServer(labelJudge(labelsOf(t, set)))
	defer srv.Close()
	t.Setenv("EVAL_TEST_KEY", "sk-eval")
	outFile := filepath.Join(t.TempDir(), "spans.jsonl")
	out, _, err := runEval(t, "-data", writeFile(t, "set.jsonl", set), "-split", "all",
		"-judge", "openai:eval-model", "-base-url", srv.URL, "-api-key-env", "EVAL_TEST_KEY", "-out", outFile)
	if err != nil {
		t.Fatal(err)
	}
	f := row(t, out, "all", "openai:eval-model")
	if f[colPrecision] != "1.000" || f[colRecall] != "1.000" || f[colF1] != "1.000" || f[colKappa] != "1.000" || f[colCPMAE] != "0.000" {
		t.Errorf("a judge that knows the labels: %v", f)
	}
	row(t, out, "all", "builtin:lexical") // measured alongside
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer sk-eval" || reqs[0].Batched() {
		t.Fatalf("%d requests; want per_chunk requests with the key", len(reqs))
	}
	// The set repeats some (query, reference, chunk) triples — the demo's
	// good and bad rankings hold the same chunks — and the verdict cache
	// answers those, as in the processor.
	var cost []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 8 && f[0] == "openai:eval-model" {
			cost = f
		}
	}
	n := len(strings.Split(strings.TrimSpace(readFile(t, outFile)), "\n"))
	if len(cost) < 8 || cost[1] != fmt.Sprint(n) || cost[2] != "0" {
		t.Fatalf("cost row %q", cost)
	}
	perRetrieval := float64(len(reqs)) / float64(n)
	if cost[3] != fmt.Sprintf("%.2f", perRetrieval) || cost[4] != fmt.Sprintf("%.0f", 100*perRetrieval) || cost[5] != fmt.Sprintf("%.0f", 10*perRetrieval) {
		t.Errorf("cost row %q for %d requests over %d retrievals", cost, len(reqs), n)
	}
	if cost[6] == "-" || cost[6] == "0.0%" {
		t.Errorf("cache hits %s; the demo's rankings repeat chunks", cost[6])
	}

	// -out: one line per retrieval in file order, for the judge under -judge.
	lines := strings.Split(strings.TrimSpace(readFile(t, outFile)), "\n")
	var first spanResult
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.ID != "demo-1-good" || first.Judge != "openai:eval-model" || len(first.Verdicts) != 4 ||
		first.Reasons[0] != "the label says yes" || first.CPJudged == nil || *first.CPJudged != first.CPTrue || first.Stages != nil {
		t.Errorf("first -out line %s", lines[0])
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunConcurrentInOrder holds the first four requests until all four are
// in flight, and then the first retrieval's until the three others have
// been answered, so that answers arrive out of order; the report and -out
// must still follow the file.
func TestRunConcurrentInOrder(t *testing.T) {
	var set strings.Builder
	labels := map[string]bool{}
	for i := range 12 {
		text := fmt.Sprintf("chunk of retrieval %d", i)
		labels[labelKey(fmt.Sprintf("question %d", i), text)] = i%3 == 0
		fmt.Fprintf(&set, `{"id": "r%d", "query": "question %d", "reference": "answer %d", "chunks": [{"text": %q, "relevant": %v}]}`+"\n", i, i, i, text, i%3 == 0)
	}
	answer := labelJudge(labels)
	const width = 4
	var arrived atomic.Int64
	allIn := make(chan struct{})
	othersAnswered := make(chan struct{}, width)
	// guard only keeps a broken pipeline from hanging the test.
	guard := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(10 * time.Second):
			return false
		}
	}
	srv := chattest.NewServer(func(n int, r chattest.Request) chattest.Reply {
		k := arrived.Add(1)
		if k == width {
			close(allIn)
		}
		if k > width {
			return answer(n, r)
		}
		if !guard(allIn) {
			return chattest.Reply{Status: 400, Body: `{"error":{"message":"requests were not concurrent"}}`}
		}
		if r.Block("CHUNK") != "chunk of retrieval 0" {
			defer func() { othersAnswered <- struct{}{} }()
			return answer(n, r)
		}
		for range width - 1 {
			guard(othersAnswered)
		}
		return answer(n, r)
	})
	defer srv.Close()
	outFile := filepath.Join(t.TempDir(), "spans.jsonl")
	out, _, err := runEval(t, "-data", writeFile(t, "set.jsonl", set.String()), "-judge", "openai:m", "-base-url", srv.URL,
		"-concurrency", fmt.Sprint(width), "-out", outFile)
	if err != nil {
		t.Fatal(err)
	}
	if srv.MaxInFlight() < width {
		t.Errorf("at most %d requests in flight with -concurrency %d", srv.MaxInFlight(), width)
	}
	if f := row(t, out, "all", "openai:m"); f[colF1] != "1.000" || f[colRetrievals] != "12" {
		t.Errorf("row %v", f)
	}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, outFile)))
	for i := 0; sc.Scan(); i++ {
		var r spanResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("r%d", i); r.ID != want {
			t.Fatalf("-out line %d is %s, want %s", i+1, r.ID, want)
		}
	}
}

// A judge that fails on some retrievals is measured on the rest, and says
// so; one that fails on all of them fails the run.
func TestRunJudgeFailures(t *testing.T) {
	set := `{"id": "ok", "query": "q1", "reference": "a", "chunks": [{"text": "fine chunk", "relevant": true}]}
{"id": "bad", "query": "q2", "reference": "a", "chunks": [{"text": "doomed chunk", "relevant": true}]}
`
	srv := chattest.NewServer(func(n int, r chattest.Request) chattest.Reply {
		if strings.Contains(r.Block("CHUNK"), "doomed") {
			return chattest.Reply{Status: 400}
		}
		return labelJudge(map[string]bool{labelKey("q1", "fine chunk"): true})(n, r)
	})
	defer srv.Close()
	out, _, err := runEval(t, "-data", writeFile(t, "set.jsonl", set), "-judge", "openai:m", "-base-url", srv.URL, "-split", "all")
	if err != nil {
		t.Fatal(err)
	}
	if f := row(t, out, "all", "openai:m"); f[colRetrievals] != "1" {
		t.Errorf("row %v", f)
	}
	if !strings.Contains(out, "openai:m: 1 of 2 retrievals failed and are left out of its figures; first: retrieval bad:") {
		t.Errorf("no failure note:\n%s", out)
	}
	_, _, err = runEval(t, "-data", writeFile(t, "set.jsonl", set), "-judge", "openai:m", "-base-url", srv.URL, "-limit", "1", "-split", "all")
	if err != nil {
		t.Errorf("-limit 1 judges only the good retrieval: %v", err)
	}
	srv400 := chattest.NewServer(func(int, chattest.Request) chattest.Reply { return chattest.Reply{Status: 400} })
	defer srv400.Close()
	if _, _, err := runEval(t, "-data", writeFile(t, "set.jsonl", set), "-judge", "openai:m", "-base-url", srv400.URL); err == nil ||
		!strings.Contains(err.Error(), "failed on every retrieval") {
		t.Errorf("a judge that always fails: %v", err)
	}
}

func TestRunTables(t *testing.T) {
	tsv := "query\treference\tchunk\tlabel\n" +
		"What government position was held by Shirley Temple?\tChief of Protocol\tShirley Temple served as Chief of Protocol of the United States.\t1\n" +
		"What government position was held by Shirley Temple?\tChief of Protocol\tThe Lord High Treasurer was an English government position.\t0\n"
	csv := "question,document,label\n\"Is Kiss and Tell a film?\",Janet Waldo was a voice actress.,no\n\"Is Kiss and Tell a film?\",\"Kiss and Tell is a 1945 American comedy film.\",yes\n"
	for name, content := range map[string]string{"set.tsv": tsv, "set.csv": csv} {
		out, _, err := runEval(t, "-data", writeFile(t, name, content), "-split", "all")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f := row(t, out, "all", "builtin:lexical"); f[colRetrievals] != "1" || f[colF1] != "1.000" {
			t.Errorf("%s: %v", name, f)
		}
	}
}

// -convert writes the evalset format, which reads back as the same set.
func TestRunConvert(t *testing.T) {
	out, _, err := runEval(t, "-convert", "-data", writeFile(t, "sample.jsonl", hotpotSample))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# ") || !strings.Contains(out, hotpotqa.Attribution) {
		t.Errorf("no header naming the source:\n%s", out)
	}
	r := evalset.NewReader(strings.NewReader(out))
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "a" || first.Reference != "Chief of Protocol" || first.Type != hotpotqa.TypeOther || first.Chunks[0].Title != "Shirley Temple" || !first.Chunks[0].Relevant {
		t.Errorf("converted %+v", first)
	}
	// The converted file evaluates as the original does.
	orig, _, err := runEval(t, "-data", writeFile(t, "sample.jsonl", hotpotSample), "-split", "all")
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := runEval(t, "-data", writeFile(t, "converted.jsonl", out), "-split", "all")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := row(t, orig, "all", "builtin:lexical"), row(t, conv, "all", "builtin:lexical"); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("original %v, converted %v", a, b)
	}

	single, _, err := runEval(t, "-convert", "-single-chunk", "-data", writeFile(t, "sample.jsonl", hotpotSample))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(single, "single-chunk version") || !strings.Contains(single, `"id":"a#1"`) || !strings.Contains(single, `"id":"b#1"`) {
		t.Errorf("single-chunk conversion:\n%s", single)
	}
}
