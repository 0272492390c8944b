// Command ragprecision-eval measures how well a relevance judge agrees with
// human labels, and what that does to Contextual Precision, before the judge
// is deployed:
//
//	ragprecision-eval [-judge MODEL] [-data FILE] [-base-url URL] [-api-key-env VAR]
//	    [-mode per_chunk|batched] [-concurrency N] [-out FILE] [-limit N]
//	    [-titles] [-split all|tune|heldout] [-by-type] [-single-chunk]
//	ragprecision-eval -traces FILE [-config COLLECTOR.yaml] [-judge MODEL …]
//	ragprecision-eval -traces REPLAYED -against RECORDED [-config COLLECTOR.yaml]
//
// The data is labelled retrievals: the evalset format (JSON Lines, one
// retrieval per line, see docs/EVAL_FORMAT.md), a table of query, chunk and
// label (.tsv or .csv), or the HotpotQA sample, converted on the fly. With
// no -data it reads the HotpotQA sample when it finds it
// (../shared/data/hotpotqa_dev500.jsonl or $RAGPRECISION_HOTPOTQA), and
// otherwise a small set shipped in testdata/, saying where to get HotpotQA.
//
// The judge (-judge, default builtin:lexical) is built exactly as the
// processor builds it, so an LLM judge is measured as it will run. It is
// reported next to builtin:lexical and to a naive word-overlap baseline, on
// the whole set and on its two halves (builtin:lexical was tuned on the
// tuning half of the HotpotQA sample only): verdict precision, recall, F1,
// Cohen's kappa, the mean absolute error of CP, and what the judge's
// requests cost per retrieval. Retrievals are judged -concurrency at a time
// and reported in file order; the file is streamed, so its size does not
// matter. -out writes each retrieval's verdicts, reasons and CP next to its
// labels, for inspection.
//
// -single-chunk measures the set's single-chunk version (each retrieval cut
// to one of its chunks, alternately relevant and not; see
// evalset.SingleChunk), where a judge cannot compare chunks with each other.
//
// -traces measures a judge on recorded traffic instead (traces.go): the
// verdicts the processor recorded on the spans are the labels, and -against
// compares two recordings of the same spans without judging.
//
// -convert writes the data in the evalset format to stdout instead of
// judging it, after -single-chunk, -split and -limit:
//
//	ragprecision-eval -convert -data table.tsv > set.jsonl
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge/openai"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragprecision-eval:", err)
		os.Exit(1)
	}
}

// errInterrupted marks a run stopped before the end of its data.
var errInterrupted = errors.New("interrupted")

// options are the command line.
type options struct {
	judgeFlags
	data, format  string
	out           string
	limit         int
	titles        bool
	split         string
	byType        bool
	singleChunk   bool
	convert       bool
	progressEvery time.Duration
	oracle        float64
	// traces and against are recordings (-traces); configPath and
	// processorID say how they were recorded.
	traces, against         fileList
	configPath, processorID string
	// set are the flags given on the command line.
	set map[string]bool
}

// fileList is a flag that may be given more than once.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

func (l *fileList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// oracleKeyEnv names the placeholder key of the -oracle judge.
const oracleKeyEnv = "RAGPRECISION_ORACLE_KEY"

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("ragprecision-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.model, "judge", lexicalModel, "the judge to measure, as in the processor's judge.model: builtin:lexical, provider:model (openai:gpt-4o-mini, ollama:llama3.1:8b, …), or cascade:provider:model")
	fs.Float64Var(&o.minConfidence, "min-confidence", config.Default().Judge.Cascade.MinConfidence, "a cascade's judge.cascade.min_confidence: builtin:lexical's verdicts at least this sure are final")
	fs.StringVar(&o.criteria, "criteria", "", "judge.criteria: what relevant means in your domain (LLM judges read it)")
	fs.Float64Var(&o.oracle, "oracle", -1, "judge with a local LLM that answers from the labels, wrong on this share of chunks (0: a perfect LLM); -judge may then be openai:oracle or cascade:openai:oracle")
	fs.StringVar(&o.data, "data", "", "labelled retrievals: evalset JSON Lines, a .tsv/.csv table or a HotpotQA file (default: the HotpotQA sample if found, else the built-in handbook set)")
	fs.StringVar(&o.format, "format", formatAuto, "format of -data: auto, retrievals, hotpotqa, tsv or csv")
	fs.StringVar(&o.baseURL, "base-url", "", "the judge's OpenAI-compatible endpoint, when not the provider's own")
	fs.StringVar(&o.keyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the judge's API key")
	fs.StringVar(&o.mode, "mode", string(openai.ModePerChunk), "the LLM judge's mode, as judge.mode: per_chunk or batched")
	fs.StringVar(&o.responseFormat, "response-format", string(openai.FormatAuto), "the LLM judge's response format, as judge.response_format: auto, json_schema, json_object or text")
	fs.IntVar(&o.concurrency, "concurrency", 8, "retrievals judged at once (and the LLM judge's requests in flight)")
	fs.StringVar(&o.out, "out", "", "write each retrieval's verdicts, reasons and CP next to its labels to this file (JSON Lines), for the judge under -judge")
	fs.IntVar(&o.limit, "limit", 0, "stop after this many retrievals (0: all)")
	fs.BoolVar(&o.titles, "titles", false, `present chunks that have a title as "title: text"`)
	fs.StringVar(&o.split, "split", "", "judge only this half: all, tune or heldout (default: report all three from one pass)")
	fs.BoolVar(&o.byType, "by-type", false, "also report each retrieval type separately (HotpotQA: yes/no questions and the others)")
	fs.BoolVar(&o.singleChunk, "single-chunk", false, "measure the set's single-chunk version: each retrieval cut to one chunk, alternately relevant and not")
	fs.BoolVar(&o.convert, "convert", false, "write the data in the evalset format to stdout instead of judging it")
	fs.DurationVar(&o.progressEvery, "progress", 2*time.Second, "report progress on stderr this often (0: only at the end)")
	fs.Var(&o.traces, "traces", "instead of labelled data, judge the scored retrieval spans of a recording (the OTLP JSON lines of the collector's file exporter; a glob, or repeat the flag, for several files) and compare with the verdicts recorded on them")
	fs.Var(&o.against, "against", "with -traces: judge nothing, but compare the verdicts on -traces (a replay's) with those recorded on the same spans, by trace and span ID, in this recording")
	fs.StringVar(&o.configPath, "config", "", "with -traces: the recording collector's configuration, whose ragprecision processor's attributes, top_k, limits and judge.max_chunk_chars are used (default: the processor's defaults)")
	fs.StringVar(&o.processorID, "processor", "", "with -config: the ragprecision processor to read, e.g. ragprecision/live (default: the file's only one)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.concurrency < 1 {
		return o, fmt.Errorf("-concurrency must be at least 1, got %d", o.concurrency)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if len(o.traces) > 0 || len(o.against) > 0 || o.configPath != "" || o.processorID != "" {
		return runTraces(ctx, stdout, stderr, o)
	}
	splits := []evalset.Split{evalset.All, evalset.Tune, evalset.HeldOut}
	only := evalset.All
	if o.split != "" {
		if only, err = evalset.ParseSplit(o.split); err != nil {
			return err
		}
		splits = []evalset.Split{only}
	}
	d, err := openData(o.data, o.format, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	// The single-chunk version is cut from the whole file before a half is
	// taken, so that a half's single-chunk retrievals are the same whether
	// it is judged alone (-split) or with the other.
	src := d.src
	if o.singleChunk {
		src = evalset.SingleChunk(src)
	}
	src = evalset.Limit(evalset.OnlySplit(src, only), o.limit)

	if o.convert {
		return convert(stdout, d, src, o)
	}
	if o.oracle >= 0 {
		// A judge that answers from the labels, at this error rate.
		orc, err := newOracle(o.oracle)
		if err != nil {
			return err
		}
		defer orc.close()
		src = orc.source(src, o.titles)
		o.baseURL, o.keyEnv = orc.url(), oracleKeyEnv
		if o.model == lexicalModel {
			o.model = "openai:oracle"
		}
		if err := os.Setenv(oracleKeyEnv, "oracle"); err != nil {
			return err
		}
	}
	return evaluate(ctx, stdout, stderr, d, src, splits, o)
}

// describe is how the report names the data and its transformation.
func describe(d dataset, o options) string {
	s := fmt.Sprintf("%s, %s format", d.name, d.format)
	if o.singleChunk {
		s += ", single-chunk version"
	}
	if o.limit > 0 {
		s += fmt.Sprintf(", first %d retrievals", o.limit)
	}
	return s
}

// convert writes src in the evalset format.
func convert(stdout io.Writer, d dataset, src evalset.Source, o options) error {
	w := evalset.NewWriter(stdout)
	_ = w.Comment("Labelled retrievals in the evalset format (docs/EVAL_FORMAT.md), written by ragprecision-eval -convert")
	_ = w.Comment("from " + describe(d, o) + ".")
	if d.attribution != "" {
		_ = w.Comment("Source: " + d.attribution + ".")
	}
	for {
		r, err := src.Next()
		if err == io.EOF {
			return w.Flush()
		}
		if err != nil {
			return err
		}
		if err := w.Write(r); err != nil {
			return err
		}
	}
}

// evaluate judges src with every candidate and prints the report.
func evaluate(ctx context.Context, stdout, stderr io.Writer, d dataset, src evalset.Source, splits []evalset.Split, o options) error {
	cs, closeJudges, err := candidates(o.judgeFlags, os.Getenv)
	if err != nil {
		return err
	}
	defer closeJudges()

	results, err := openResults(o.out)
	if err != nil {
		return err
	}
	if results != nil {
		defer results.close() // after finish, a no-op
	}

	chunks := "chunk text"
	if o.titles {
		chunks = `"title: text" where a chunk has a title`
	}
	fmt.Fprintf(stdout, "Data: %s; chunks shown as %s\n", describe(d, o), chunks)
	if d.attribution != "" {
		fmt.Fprintf(stdout, "Source: %s\n", d.attribution)
	}
	fmt.Fprintf(stdout, "Judges: %s", cs[0].name)
	for _, c := range cs[1:] {
		fmt.Fprintf(stdout, ", %s", c.name)
	}
	fmt.Fprintf(stdout, " (-concurrency %d)\n\n", o.concurrency)

	t := newTally(len(cs), splits, o.byType)
	interrupted, err := judgeInto(ctx, src, cs, o.titles, o.concurrency, t, results, o.progressEvery, stdout, stderr)
	if err != nil {
		return err
	}
	if interrupted {
		return fmt.Errorf("%w: the figures above cover only the retrievals judged so far", errInterrupted)
	}
	if mj := t.judges[0]; mj.retrievals > 0 && mj.failed == mj.retrievals {
		return fmt.Errorf("%s failed on every retrieval; first: %v", cs[0].name, mj.firstErr)
	}
	if t.judges[0].retrievals == 0 {
		return errors.New("no retrieval to judge")
	}
	return nil
}
