package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/promcheck"
)

const rules = "../../deploy/prometheus/ragprecision.rules.yml"

func TestScalesTheRuleFile(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-scale", "1/120", rules}, &out); err != nil {
		t.Fatal(err)
	}
	f, err := promcheck.ParseRules(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var sawHour, sawWeek bool
	for _, r := range f.Rules() {
		sawHour = sawHour || strings.Contains(r.Expr, "[30s]")
		sawWeek = sawWeek || strings.Contains(r.Expr, "[1h24m] offset 30s")
		if r.Alert == "RAGContextualPrecisionDropped" && r.For != "7s500ms" {
			t.Errorf("for: %s", r.For)
		}
	}
	if !sawHour || !sawWeek {
		t.Errorf("hour scaled %v, week and offset scaled %v", sawHour, sawWeek)
	}

	path := filepath.Join(t.TempDir(), "scaled.yml")
	if err := run([]string{"-scale", "0.5", "-o", path, rules}, &out); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || !bytes.Contains(data, []byte("[30m]")) {
		t.Errorf("-o wrote %d bytes without [30m]: %v", len(data), err)
	}
}

func TestRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{rules, rules},
		{"-scale", "0", rules},
		{"-scale", "1/1e9", rules},
		{"missing.yml"},
	} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
