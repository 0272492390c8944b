package judge_test

import (
	"context"
	"testing"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
)

// labelJudge answers like a perfect LLM: a chunk is relevant when its text
// is in relevant.
func labelJudge(relevant map[string]bool) chattest.Handler {
	return func(_ int, r chattest.Request) chattest.Reply {
		v := "no"
		if relevant[r.Block("CHUNK")] {
			v = "yes"
		}
		return chattest.Reply{Content: `{"verdict":"` + v + `","reason":"labels"}`, PromptTokens: 100, CompletionTokens: 10}
	}
}

var monaLisa = judge.Request{
	Query:     "Who painted the Mona Lisa?",
	Reference: "Leonardo da Vinci",
	Chunks: []string{
		"The Mona Lisa was painted by Leonardo da Vinci in the early 16th century.",
		"Bananas are rich in potassium.",
		"The Louvre in Paris holds many paintings.",
		"Leonardo da Vinci was born in Vinci, Tuscany.",
	},
}

// A cascade lets builtin:lexical decide what it is sure of and asks the LLM
// about the rest; every verdict says which stage decided it.
func TestCascadeAsksTheLLMOnlyWhereUnsure(t *testing.T) {
	srv := judgetest.NewChatServer(t, labelJudge(map[string]bool{monaLisa.Chunks[0]: true, monaLisa.Chunks[3]: true}))
	lex, _, _ := builtin.NewLexical(judgetest.NewLLM("").MaxChunkChars).Attempt(context.Background(), monaLisa.Query, monaLisa.Reference, monaLisa.Chunks)
	const min = 0.5
	sure := 0
	for _, v := range lex {
		if v.Confidence >= min {
			sure++
		}
	}
	if sure == 0 || sure == len(lex) {
		t.Fatalf("the example must have sure and unsure verdicts: %+v", lex)
	}
	c := judgetest.NewLLM(srv.URL).WithCascade(min)
	j := c.New(t)
	if j.ID() != "cascade:openai:gpt-test" {
		t.Fatalf("ID %q", j.ID())
	}
	res, err := j.Judge(context.Background(), monaLisa)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Verdicts {
		want := "openai:gpt-test"
		if lex[i].Confidence >= min {
			want = builtin.LexicalID
			if v.Relevant != lex[i].Relevant || v.Confidence != lex[i].Confidence {
				t.Errorf("chunk %d: the first stage's verdict was not kept: %+v", i, v)
			}
		}
		if v.Stage != want {
			t.Errorf("chunk %d decided by %q, want %q", i, v.Stage, want)
		}
	}
	if got := srv.Calls(); got != int64(len(lex)-sure) {
		t.Fatalf("%d LLM calls, want %d: one per unsure chunk", got, len(lex)-sure)
	}
	// A confidence of 0: builtin:lexical decides everything, nothing is sent.
	j0 := c.WithCascade(0).New(t)
	before := srv.Calls()
	if _, err := j0.Judge(context.Background(), monaLisa); err != nil || srv.Calls() != before {
		t.Fatalf("%v, %d calls", err, srv.Calls()-before)
	}
}

// With criteria, which builtin:lexical cannot read, the cascade's first
// stage decides only "not relevant": criteria can only narrow relevance.
func TestCascadeWithCriteriaKeepsOnlySureNegatives(t *testing.T) {
	srv := judgetest.NewChatServer(t, labelJudge(map[string]bool{}))
	c := judgetest.NewLLM(srv.URL)
	c.Criteria = "Relevant only if it names the museum that holds the painting."
	j := c.WithCascade(0).New(t)
	res, err := j.Judge(context.Background(), monaLisa)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Verdicts {
		if v.Stage == builtin.LexicalID && v.Relevant {
			t.Errorf("chunk %d: builtin:lexical decided relevant although it cannot read the criteria", i)
		}
	}
	if srv.Calls() == 0 {
		t.Fatal("the LLM was not asked about the chunks builtin:lexical found relevant")
	}
}
