package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

const committed = "../../deploy/prometheus/ragprecision.canary.test.yml"

// TestTestFileIsUpToDate fails when the committed test file is not what
// this program writes.
func TestTestFileIsUpToDate(t *testing.T) {
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run make canary-tests", committed)
	}
}

func TestSimulatePrintsEveryCase(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-simulate", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"canary file of 50 retrievals", "canary file of 1000 retrievals", "smallest drop 0.04", "random: 100% fired", "7.5% lenient"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if err := run([]string{"-simulate", "x"}, &out); err == nil {
		t.Error("a bad flag was accepted")
	}
}

func TestMinutes(t *testing.T) {
	for m, want := range map[int]string{0: "0m", 45: "45m", 90: "1h30m", 1440: "1d", 11615: "8d1h35m"} {
		if got := minutes(m); got != want {
			t.Errorf("minutes(%d) = %q, want %q", m, got, want)
		}
	}
}
