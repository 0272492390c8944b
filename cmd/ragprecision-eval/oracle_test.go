package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/hotpotqa"
)

// -oracle judges with a local LLM that answers from the labels: perfect at
// error rate 0, so its agreement is 1; and a cascade over it asks it only
// about the chunks builtin:lexical is unsure of, which the stage line
// reports.
func TestOracleAndCascade(t *testing.T) {
	t.Setenv(hotpotqa.EnvPath, filepath.Join(t.TempDir(), "absent.jsonl")) // the built-in set
	out, _, err := runEval(t, "-judge", "openai:oracle", "-oracle", "0", "-progress", "0")
	if err != nil {
		t.Fatal(err)
	}
	if f := row(t, out, "all", "openai:oracle"); f[colF1] != "1.000" || f[colKappa] != "1.000" {
		t.Fatalf("a perfect oracle must agree with the labels: %v\n%s", f, out)
	}

	out, _, err = runEval(t, "-judge", "cascade:openai:oracle", "-oracle", "0", "-min-confidence", "0.7", "-progress", "0")
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "cascade:openai:oracle verdicts by deciding stage:") {
			line = l
		}
	}
	if !strings.Contains(line, "builtin:lexical") || !strings.Contains(line, "openai:oracle") {
		t.Fatalf("no stage line for the cascade:\n%s", out)
	}
	f := row(t, out, "all", "cascade:openai:oracle")
	if f1, _ := strconv.ParseFloat(f[colF1], 64); f1 < 0.9 {
		t.Errorf("cascade F1 %v over a perfect LLM", f1)
	}

	// An oracle wrong on every chunk disagrees with every label.
	out, _, err = runEval(t, "-judge", "openai:oracle", "-oracle", "1", "-progress", "0")
	if err != nil {
		t.Fatal(err)
	}
	if f := row(t, out, "all", "openai:oracle"); f[colF1] != "0.000" {
		t.Fatalf("an always-wrong oracle: %v", f)
	}
}
