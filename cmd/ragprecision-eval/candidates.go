package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
)

// maxChunkChars is the judge.max_chunk_chars of every judge measured:
// HotpotQA paragraphs reach 8,000 characters.
const maxChunkChars = 8192

// lexicalModel is the offline judge's model string.
const lexicalModel = builtin.LexicalID

// candidate is a judge under evaluation.
type candidate struct {
	name  string
	judge func(context.Context, judge.Request) (judge.Result, error)
	// cost counts what the judge's requests cost; nil for in-process judges,
	// which make none.
	cost *costObserver
	// baseline marks the judge the others are compared with.
	baseline bool
	// version is the judge's judge_version ("" for the baseline).
	version string
}

// judgeFlags are the flags that describe the judge under evaluation.
type judgeFlags struct {
	model, baseURL, keyEnv, mode, responseFormat string
	concurrency                                  int
	minConfidence                                float64
	criteria                                     string
	// maxChunkChars is judge.max_chunk_chars; 0 means maxChunkChars.
	maxChunkChars int
}

// judgeSection is the judge: section f describes, with the processor's
// defaults where the command has no flag, but for what a measurement wants:
// a long timeout, fewer retries and no request budget.
func (f judgeFlags) judgeSection(getenv func(string) string) config.Judge {
	j := config.Default().Judge
	j.Model, _ = config.ParseModel(f.model) // a bad one is reported by Check
	j.BaseURL = f.baseURL
	j.APIKey = configopaque.String(getenv(f.keyEnv))
	j.Mode, j.ResponseFormat = f.mode, f.responseFormat
	j.ClientConfig.Timeout = 60 * time.Second
	j.MaxConcurrency = max(f.concurrency, 1)
	j.MaxRequestsPerSecond = 0
	j.MaxRetries = 2
	j.MaxChunkChars = maxChunkChars
	if f.maxChunkChars > 0 {
		j.MaxChunkChars = f.maxChunkChars
	}
	j.Cascade.MinConfidence = f.minConfidence
	j.Criteria = f.criteria
	return j
}

// verdictCache is the measured judges' cache: a verdict asked for twice in a
// set (the same chunk for the same question and reference) is paid for
// once, as in the processor.
var verdictCache = config.Cache{Size: 100000}

// candidates lists the judges to run on every retrieval: the judge f names
// (the one -out reports on) first, then builtin:lexical when f names another
// judge, then the naive baseline. close releases the judges' connections.
func candidates(f judgeFlags, getenv func(string) string) (cs []candidate, close func(), err error) {
	var closers []io.Closer
	close = func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}
	add := func(section config.Judge) error {
		if err := section.Check("judge"); err != nil {
			return err
		}
		cost := &costObserver{}
		j, err := config.NewJudge(section, verdictCache, nil, judge.WithObserver(cost))
		if err != nil {
			return err
		}
		closers = append(closers, j)
		if j.ID() == lexicalModel {
			cost = nil // in-process: no requests to count
		}
		cs = append(cs, candidate{name: j.ID(), judge: j.Judge, cost: cost, version: section.Version()})
		return nil
	}
	if err := add(f.judgeSection(getenv)); err != nil {
		if getenv(f.keyEnv) == "" {
			err = fmt.Errorf("%w (the API key is read from $%s, which is empty; see -api-key-env)", err, f.keyEnv)
		}
		return nil, nil, fmt.Errorf("-judge %s: %w", f.model, err)
	}
	if cs[0].name != lexicalModel {
		lf := f
		lf.model = lexicalModel
		if err := add(lf.judgeSection(getenv)); err != nil {
			close()
			return nil, nil, err
		}
	}
	naive := evalset.Naive(evalset.NaiveThreshold)
	cs = append(cs, candidate{
		name:     fmt.Sprintf("naive@%.2g", evalset.NaiveThreshold),
		judge:    fromVerdictFunc(naive),
		baseline: true,
	})
	return cs, close, nil
}

// fromVerdictFunc adapts an in-process judge to the signature of
// judge.Engine.Judge.
func fromVerdictFunc(f evalset.VerdictFunc) func(context.Context, judge.Request) (judge.Result, error) {
	return func(_ context.Context, req judge.Request) (judge.Result, error) {
		vs, err := f(req.Query, req.Reference, req.Chunks)
		if err != nil {
			return judge.Result{}, err
		}
		out := make([]judge.Verdict, len(vs))
		for i, v := range vs {
			out[i].Relevant = v
		}
		return judge.Result{Verdicts: out}, nil
	}
}

// costObserver counts a judge's requests and tokens, as the processor's
// judge_requests and judge_tokens metrics do.
type costObserver struct {
	requests                       atomic.Int64
	promptTokens, completionTokens atomic.Int64
	cacheHits, cacheMisses         atomic.Int64
}

func (o *costObserver) JudgeRequest(_ judge.Purpose, _ judge.Outcome, _ judge.Reason, _ time.Duration, u judge.Usage) {
	o.requests.Add(1)
	o.promptTokens.Add(u.PromptTokens)
	o.completionTokens.Add(u.CompletionTokens)
}

func (*costObserver) JudgeHealth(error) {}

func (o *costObserver) CacheLookups(hits, misses int) {
	o.cacheHits.Add(int64(hits))
	o.cacheMisses.Add(int64(misses))
}
