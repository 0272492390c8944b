package builtin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
)

// newLexical runs builtin:lexical on the engine, reading as much of each
// chunk as s lets through, as the processor builds it.
func newLexical(t *testing.T, s judge.Settings, opts ...judge.Option) *judge.Engine {
	t.Helper()
	return judgetest.New(t, builtin.NewLexical(s.MaxChunkChars), s, opts...)
}

func TestBuiltinNeedsNoNetwork(t *testing.T) {
	j := newLexical(t, judge.Settings{MaxConcurrency: 1, MaxChunkChars: 100})
	if j.ID() != "builtin:lexical" {
		t.Fatalf("ID %q", j.ID())
	}
	res, err := j.Judge(context.Background(), judge.Request{
		Query:     "Who painted the Mona Lisa?",
		Reference: "Leonardo da Vinci",
		Chunks:    []string{"The Mona Lisa was painted by Leonardo da Vinci in the early 16th century.", "Bananas are rich in potassium."},
	})
	if err != nil || len(res.Verdicts) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if !res.Verdicts[0].Relevant || res.Verdicts[1].Relevant {
		t.Fatalf("verdicts %+v", res.Verdicts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Judge(ctx, judge.Request{Reference: "r", Chunks: []string{"c"}}); err == nil {
		t.Fatal("a cancelled judgement must not return verdicts")
	}
}

// builtin:lexical is not cached, whatever the cache size says: it judges a
// retrieval again for less than keeping its verdicts costs (cacheSizeFor).
// Its repeats get the same verdicts, judged again, whether it is called
// inline or through the scheduler, and no cache lookup is counted.
func TestBuiltinJudgeIsNotCached(t *testing.T) {
	obs := judgetest.NewRecordingObserver()
	j := newLexical(t, judge.Settings{MaxConcurrency: 1, MaxChunkChars: 100, CacheSize: 10}, judge.WithObserver(obs))
	req := judge.Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{"The Mona Lisa was painted by Leonardo da Vinci.", "Bananas are rich in potassium."}}
	first, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := judgetest.Relevant(first); !got[0] || got[1] {
		t.Fatalf("verdicts %v", got)
	}
	second, err := j.Judge(context.Background(), req)
	if err != nil || !slices.Equal(second.Verdicts, first.Verdicts) {
		t.Fatalf("%+v %v", second, err)
	}
	tk, err := j.Admit(req, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan judge.Result, 1)
	tk.Commit(func(res judge.Result, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- res
	})
	if third := <-done; !slices.Equal(third.Verdicts, first.Verdicts) {
		t.Fatalf("through the scheduler: %+v", third)
	}
	if s := obs.Snapshot(); s.Hits != 0 || s.Misses != 0 {
		t.Fatalf("hits %d misses %d: no cache, no lookups", s.Hits, s.Misses)
	}
}

// Empty and overlong chunks keep their places among the verdicts of an
// inline judge: empty ones are decided without it, long ones cut.
func TestBuiltinInlineKeepsRanks(t *testing.T) {
	j := newLexical(t, judge.Settings{MaxConcurrency: 1, MaxChunkChars: 60})
	long := "Bananas grow in bunches. " + strings.Repeat("Bananas are yellow. ", 5) + "The Mona Lisa was painted by Leonardo da Vinci."
	res, err := j.JudgeInline(judge.Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{"  ", long, "The Mona Lisa was painted by Leonardo da Vinci.", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Verdicts) != 4 {
		t.Fatalf("%d verdicts", len(res.Verdicts))
	}
	for _, i := range []int{0, 3} {
		if v := res.Verdicts[i]; v.Relevant || v.Reason != judge.EmptyChunkReason {
			t.Errorf("chunk %d: %+v", i, v)
		}
	}
	if got := judgetest.Relevant(res); got[1] || !got[2] {
		t.Fatalf("verdicts %v: the long chunk is read only up to the cut", got)
	}
}

// builtin:lexical honours the engine's cut like every judge: text beyond it
// is not read.
func TestBuiltinHonoursMaxChunkChars(t *testing.T) {
	j := newLexical(t, judge.Settings{MaxConcurrency: 1, MaxChunkChars: 40})
	filler := strings.Repeat("Bananas grow in bunches. ", 4)
	res, err := j.Judge(context.Background(), judge.Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{filler + "The Mona Lisa was painted by Leonardo da Vinci.", "The Mona Lisa was painted by Leonardo da Vinci."}})
	if err != nil {
		t.Fatal(err)
	}
	if got := judgetest.Relevant(res); got[0] || !got[1] {
		t.Fatalf("verdicts %v: the answer beyond the cut must not be read", got)
	}
}

// ... and reads all of it, even beyond the lexical judge's own default cut
// (lexical.MaxChunkRunes), in a cascade's first stage too: every stage sees
// the same chunk.
func TestBuiltinReadsUpToMaxChunkChars(t *testing.T) {
	filler := strings.Repeat("Bananas grow in bunches. ", 400) // 10,000 runes
	req := judge.Request{Query: "Who painted the Mona Lisa?", Reference: "Leonardo da Vinci",
		Chunks: []string{filler + "The Mona Lisa was painted by Leonardo da Vinci.", "Bananas are rich in potassium."}}
	srv := judgetest.NewChatServer(t, func(int, chattest.Request) chattest.Reply {
		return chattest.Reply{Content: `{"verdict":"no","reason":"r"}`}
	})
	cascade := judgetest.NewLLM(srv.URL)
	cascade.MaxChunkChars = 20000
	cascade = cascade.WithCascade(0) // the first stage decides all
	for name, j := range map[string]*judge.Engine{
		builtin.LexicalID: newLexical(t, judge.Settings{MaxConcurrency: 1, MaxChunkChars: 20000}),
		"cascade":         cascade.New(t),
	} {
		res, err := j.Judge(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := judgetest.Relevant(res); !got[0] || got[1] {
			t.Fatalf("%s: verdicts %v: the answer within the cut must be read", name, got)
		}
	}
	if srv.Calls() != 0 {
		t.Fatalf("%d LLM calls: the first stage should have decided every chunk", srv.Calls())
	}
}

// lexicalHash is a hash of builtin:lexical's verdicts, confidences and
// reasons on the handbook set of ragprecision-eval.
func lexicalHash(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../../cmd/ragprecision-eval/testdata/handbook.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := builtin.NewLexical(4000)
	h := sha256.New()
	r := evalset.NewReader(f)
	for {
		ret, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := ret.JudgeReference()
		vs, _, err := l.Attempt(context.Background(), ret.Query, ref, ret.Texts(false))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			fmt.Fprintf(h, "%v %.6f %s\n", v.Relevant, v.Confidence, v.Reason)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// A change that changes builtin:lexical's verdicts under the same
// LexicalVersion would keep its judge_version, so that dashboards and
// alerts could not tell it from a change of retrieval: change
// LexicalVersion with the verdicts, and this hash with it.
func TestLexicalVersionNamesTheVerdicts(t *testing.T) {
	const version, hash = "lexical-2026-11", "e7cfc72c489f956c"
	if got := lexicalHash(t); builtin.LexicalVersion != version || got != hash {
		t.Errorf("LexicalVersion %q, verdicts hash %s; pinned: %q, %s. If the verdicts changed, change LexicalVersion and pin both here", builtin.LexicalVersion, got, version, hash)
	}
}
