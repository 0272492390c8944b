// Command ragprecision-eval measures how well relevance judges agree with
// human relevance labels, and what that does to Contextual Precision, on the
// HotpotQA dev sample in shared/data:
//
//	go run ./cmd/ragprecision-eval [-data path] [-titles] [-split all|tune|heldout] [-by-type]
//	    [-judge provider:model [-base-url URL] [-api-key-env VAR] [-mode per_chunk|batched]]
//
// -judge adds an LLM judge, built exactly as the processor builds it, so that
// its agreement can be measured before it is deployed.
//
// Every judge in candidates is run on the same questions and reported next
// to the naive lexical baseline, on the whole sample and on its tuning and
// held-out halves (or on one of them with -split). builtin:lexical was tuned
// on the tuning half only; the held-out rows show how far that carries.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ragprecision/ragprecision/internal/hotpotqa"
	"github.com/ragprecision/ragprecision/judge"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-eval:", err)
		os.Exit(1)
	}
}

// candidate is a judge under evaluation. Judge is the only thing the
// evaluation needs, so any judge fits: an in-process function, or anything
// behind the judge package's interface (see fromJudge).
type candidate struct {
	Name  string
	Judge hotpotqa.VerdictFunc
	// Baseline marks the judge the others are compared with.
	Baseline bool
}

// candidates lists the judges to evaluate, baseline included: builtin:lexical,
// the LLM judge llm describes (when not nil), and the naive baseline.
func candidates(ctx context.Context, llm *judge.Config) ([]candidate, func(), error) {
	lexical, err := judge.New(judgeConfig(judge.ProviderBuiltin + ":" + judge.BuiltinLexical))
	if err != nil {
		return nil, nil, err
	}
	cs := []candidate{{Name: lexical.ID(), Judge: fromJudge(ctx, lexical)}}
	closeAll := func() {}
	if llm != nil {
		j, err := judge.New(*llm)
		if err != nil {
			return nil, nil, err
		}
		cs = append(cs, candidate{Name: j.ID(), Judge: fromJudge(ctx, j)})
		if c, ok := j.(io.Closer); ok {
			closeAll = func() { _ = c.Close() }
		}
	}
	cs = append(cs, candidate{Name: fmt.Sprintf("naive@%.2g", hotpotqa.NaiveThreshold), Judge: hotpotqa.Naive(hotpotqa.NaiveThreshold), Baseline: true})
	return cs, closeAll, nil
}

// judgeConfig is a valid judge.Config for model with the processor's usual
// settings; LLM judges also need BaseURL and/or APIKey.
func judgeConfig(model string) judge.Config {
	return judge.Config{
		Model:          model,
		Mode:           judge.ModeBatched,
		ResponseFormat: judge.FormatAuto,
		Timeout:        60 * time.Second,
		MaxConcurrency: 4,
		MaxRetries:     2,
		MaxChunkChars:  8192,
	}
}

// fromJudge adapts a judge.Judge to the evaluation's VerdictFunc.
func fromJudge(ctx context.Context, j judge.Judge) hotpotqa.VerdictFunc {
	return func(query, reference string, chunks []string) ([]bool, error) {
		res, err := j.Judge(ctx, judge.Request{Query: query, Reference: reference, Chunks: chunks})
		if err != nil {
			return nil, err
		}
		out := make([]bool, len(res.Verdicts))
		for i, v := range res.Verdicts {
			out[i] = v.Relevant
		}
		return out, nil
	}
}

// result is one judge's report on one split.
type result struct {
	candidate
	report   hotpotqa.Report
	perChunk time.Duration
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ragprecision-eval", flag.ContinueOnError)
	data := fs.String("data", "", "HotpotQA JSON-lines file (default: $"+hotpotqa.EnvPath+", else shared/data/"+hotpotqa.FileName+" found by walking up from the working directory)")
	titles := fs.Bool("titles", false, `present each chunk as "title: paragraph" instead of the paragraph alone`)
	splitFlag := fs.String("split", "", "evaluate only this half: all, tune or heldout (default: all three)")
	byType := fs.Bool("by-type", false, `also report yes/no-answer questions and the others separately`)
	model := fs.String("judge", "", "also evaluate this LLM judge, provider:model (e.g. openai:gpt-4o-mini, ollama:llama3.1:8b)")
	baseURL := fs.String("base-url", "", "the LLM judge's OpenAI-compatible endpoint, when not the provider's own")
	keyEnv := fs.String("api-key-env", "OPENAI_API_KEY", "environment variable holding the LLM judge's API key")
	mode := fs.String("mode", string(judge.ModeBatched), "the LLM judge's mode: per_chunk or batched")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var llm *judge.Config
	if *model != "" {
		c := judgeConfig(*model)
		c.BaseURL, c.APIKey, c.Mode = *baseURL, os.Getenv(*keyEnv), judge.Mode(*mode)
		c.CacheSize, c.CacheTTL = 100000, 0
		llm = &c
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	splits := []hotpotqa.Split{hotpotqa.All, hotpotqa.Tune, hotpotqa.HeldOut}
	if *splitFlag != "" {
		s, err := hotpotqa.ParseSplit(*splitFlag)
		if err != nil {
			return err
		}
		splits = []hotpotqa.Split{s}
	}
	path := *data
	if path == "" {
		var err error
		if path, err = hotpotqa.DefaultPath(); err != nil {
			return fmt.Errorf("%w (use -data)", err)
		}
	}
	questions, err := hotpotqa.Load(path)
	if err != nil {
		return err
	}
	cs, closeJudges, err := candidates(ctx, llm)
	if err != nil {
		return err
	}
	defer closeJudges()

	chunks := "paragraph"
	if *titles {
		chunks = "title: paragraph"
	}
	fmt.Fprintf(stdout, "Data: %s (%d questions), chunks as %q\n", path, len(questions), chunks)
	fmt.Fprintf(stdout, "Source: %s\n\n", hotpotqa.Attribution)

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "split\tquestions\tjudge\tprecision\trecall\tF1\taccuracy\tCP MAE\tmean CP judged\tmean CP true\ttime/chunk\t")
	var notes []string
	for _, s := range splits {
		qs := hotpotqa.Select(questions, s)
		var results []result
		for _, c := range cs {
			start := time.Now()
			rep, err := hotpotqa.Evaluate(qs, c.Judge, hotpotqa.Options{Titles: *titles})
			if err != nil {
				return fmt.Errorf("%s on %s: %w", c.Name, s, err)
			}
			n := max(rep.All.Chunks, 1)
			results = append(results, result{c, rep, time.Since(start) / time.Duration(n)})
			if rep.Failed > 0 {
				notes = append(notes, fmt.Sprintf("%s on %s: %d questions failed and were left out, first: %v", c.Name, s, rep.Failed, rep.FirstError))
			}
		}
		for _, r := range results {
			row(tw, string(s), r.Name, r.report.All, r.perChunk)
			if *byType {
				row(tw, string(s)+" yes/no", r.Name, r.report.YesNo, 0)
				row(tw, string(s)+" other", r.Name, r.report.Other, 0)
			}
		}
		notes = append(notes, ratios(s, results)...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintf(stdout, "\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}

func row(w io.Writer, split, judge string, m hotpotqa.Metrics, perChunk time.Duration) {
	t := "-"
	if perChunk > 0 {
		t = perChunk.Round(100 * time.Nanosecond).String()
	}
	fmt.Fprintf(w, "%s\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n",
		split, m.Retrievals, judge, m.Precision, m.Recall, m.F1, m.Accuracy, m.CPMAE, m.MeanJudgedCP, m.MeanTrueCP, t)
}

// ratios compares every judge with the baseline on one split: F1 higher is
// better, CP MAE lower is better.
func ratios(s hotpotqa.Split, results []result) []string {
	var base *result
	for i := range results {
		if results[i].Baseline {
			base = &results[i]
		}
	}
	if base == nil {
		return nil
	}
	var out []string
	for _, r := range results {
		if r.Baseline {
			continue
		}
		out = append(out, fmt.Sprintf("%s vs %s on %s: F1 x%s, CP MAE x%s", r.Name, base.Name, s,
			ratio(r.report.All.F1, base.report.All.F1), ratio(r.report.All.CPMAE, base.report.All.CPMAE)))
	}
	return out
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}
