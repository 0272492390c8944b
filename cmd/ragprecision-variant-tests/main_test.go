package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

const committed = "../../deploy/prometheus/ragprecision.variants.test.yml"

// TestTestFileIsUpToDate fails when the committed test file is not what
// this program writes.
func TestTestFileIsUpToDate(t *testing.T) {
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, render()) {
		t.Fatalf("%s is out of date: run make variant-tests", committed)
	}
}

func TestSimulatePrintsBothScenarios(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-simulate", "3"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"two equal variants", "v2 ranks worse", "for:  60m"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if err := run([]string{"-simulate", "x"}, &out); err == nil {
		t.Error("a bad flag was accepted")
	}
}
