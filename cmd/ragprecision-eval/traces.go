package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/recording"
)

// This file runs -traces: a judge measured on recorded traffic, the
// verdicts recorded on the spans standing for the labels (docs/OPERATING.md,
// "Replaying recorded traffic").

// labelledOnly are the flags of labelled data, which -traces replaces.
var labelledOnly = []string{"data", "format", "split", "single-chunk", "convert", "titles", "oracle", "by-type"}

// judgeOnly are the flags of the judge, which -against does not run.
var judgeOnly = []string{"judge", "base-url", "api-key-env", "mode", "response-format", "criteria", "min-confidence"}

func runTraces(ctx context.Context, stdout, stderr io.Writer, o options) error {
	if len(o.traces) == 0 {
		return errors.New("-against, -config and -processor go with -traces")
	}
	if o.processorID != "" && o.configPath == "" {
		return errors.New("-processor names a processor of -config")
	}
	for _, f := range labelledOnly {
		if o.set[f] {
			return fmt.Errorf("-%s is for labelled data and does not go with -traces", f)
		}
	}
	if len(o.against) > 0 {
		for _, f := range judgeOnly {
			if o.set[f] {
				return fmt.Errorf("-%s: -against compares two recordings and judges nothing", f)
			}
		}
	}
	cfg, cfgName, err := recordingConfig(ctx, o.configPath, o.processorID, stderr)
	if err != nil {
		return err
	}
	files, err := recording.Files(o.traces...)
	if err != nil {
		return fmt.Errorf("-traces: %w", err)
	}
	if len(o.against) > 0 {
		againstFiles, err := recording.Files(o.against...)
		if err != nil {
			return fmt.Errorf("-against: %w", err)
		}
		return compareRecordings(ctx, stdout, files, againstFiles, cfg, cfgName, o)
	}
	return evaluateTraces(ctx, stdout, stderr, files, cfg, cfgName, o)
}

// recordingConfig is the processor configuration the recording was made
// with: -config's, else the defaults. A configuration the collector would
// refuse is only warned about: what the replay needs of it (attributes,
// limits) is usually fine where its API key or canary file cannot be
// found.
func recordingConfig(ctx context.Context, path, id string, stderr io.Writer) (*config.Config, string, error) {
	if path == "" {
		return config.Default(), "the processor's defaults (no -config)", nil
	}
	cfg, id, err := config.FromCollectorFile(ctx, path, id)
	if err != nil {
		return nil, "", fmt.Errorf("-config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "ragprecision-eval: -config %s: the collector would refuse processors::%s (%s); its attributes, top_k, limits and judge.max_chunk_chars are used all the same\n",
			path, id, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return cfg, fmt.Sprintf("processors::%s of %s", id, path), nil
}

// evaluateTraces judges the scored retrieval spans of a recording again
// and reports agreement with the recorded verdicts.
func evaluateTraces(ctx context.Context, stdout, stderr io.Writer, files []string, cfg *config.Config, cfgName string, o options) error {
	src, err := openTraces(files, cfg)
	if err != nil {
		return err
	}
	defer src.close()
	// The same truncation as the recording's judge, so that the same judge
	// has the same judge_version and sees the same text.
	o.maxChunkChars = cfg.Judge.MaxChunkChars
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
		results.recorded = true
		defer results.close() // after finish, a no-op
	}
	fmt.Fprintf(stdout, "Data: recorded traces in %s; read as %s\n", strings.Join(files, ", "), cfgName)
	fmt.Fprintf(stdout, "Judges: %s", cs[0].name)
	for _, c := range cs[1:] {
		fmt.Fprintf(stdout, ", %s", c.name)
	}
	fmt.Fprintf(stdout, " (-concurrency %d), each against the verdicts recorded on the spans\n\n", o.concurrency)

	t := newTally(len(cs), []evalset.Split{evalset.All}, true)
	t.recorded = true
	interrupted, err := judgeInto(ctx, evalset.Limit(src, o.limit), cs, false, o.concurrency, t, results, o.progressEvery, stdout, stderr)
	if err != nil {
		return err
	}
	st := src.stats
	describeRecording(stdout, st, t.judges[0].retrievals)
	fmt.Fprintf(stdout, "Recorded verdicts: %s\n", recordedJudges(st))
	if note := sameJudgeNote(cs[0], st); note != "" {
		fmt.Fprintln(stdout, note)
	}
	if interrupted {
		return fmt.Errorf("%w: the figures above cover only the spans judged so far", errInterrupted)
	}
	if mj := t.judges[0]; mj.retrievals > 0 && mj.failed == mj.retrievals {
		return fmt.Errorf("%s failed on every span; first: %v", cs[0].name, mj.firstErr)
	}
	if t.judges[0].retrievals == 0 {
		return fmt.Errorf("no scored retrieval span to compare in %s", strings.Join(files, ", "))
	}
	return nil
}

// sameJudgeNote says whether the judge measured is the one the verdicts
// were recorded with, by judge_version: then it should reproduce them.
func sameJudgeNote(c candidate, st *recordingStats) string {
	if len(st.judges) != 1 {
		return ""
	}
	for j := range st.judges {
		if j.version == c.version {
			return fmt.Sprintf("%s has the recorded judge_version %s: the same judge, which reproduces the recorded verdicts unless its model answers differently from one call to the next.", c.name, c.version)
		}
		return fmt.Sprintf("%s is judge_version %s, the recorded verdicts %s: another judge, or the same with other settings.", c.name, c.version, j.version)
	}
	return ""
}

// openResults opens -out, nil when it is not set.
func openResults(path string) (*resultWriter, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := newResultWriter(f)
	w.close = f.Close
	return w, nil
}
