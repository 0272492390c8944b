package portability

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The systems developers build on besides Linux on amd64, each choosing
// other files of the module: collector_other.go where Linux has
// collector_linux.go, and the pure-Go mentions search where amd64 has
// assembly. `go build ./...` and `go vet ./...` there type-check what this
// checks.
var targets = []Target{
	{GOOS: "darwin", GOARCH: "arm64"},
	{GOOS: "darwin", GOARCH: "amd64"},
	{GOOS: "windows", GOARCH: "amd64"},
}

func TestModuleBuildsOnOtherSystems(t *testing.T) {
	for _, target := range targets {
		t.Run(target.GOOS+"_"+target.GOARCH, func(t *testing.T) {
			start := time.Now()
			rep, err := Check(context.Background(), "../..", target, "./...")
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range rep.Errors {
				t.Error(err)
			}
			t.Logf("%s: %d packages of the module (tests included) and %d dependencies type-checked in %v",
				target, rep.Checked, rep.Dependencies, time.Since(start).Round(time.Millisecond))
		})
	}
}

// A module that builds on Linux only fails the check elsewhere, naming
// what is missing, in its code and in its tests.
func TestCheckFindsWhatDoesNotBuild(t *testing.T) {
	for target, want := range map[Target][]string{
		{GOOS: "linux", GOARCH: "amd64"}:   nil,
		{GOOS: "darwin", GOARCH: "arm64"}:  {"signal.go:12:9: undefined: attrs", "signal_test.go:6:36: undefined: attrs"},
		{GOOS: "windows", GOARCH: "amd64"}: {"signal.go:9:43: undefined: syscall.Kill", "signal.go:12:9: undefined: attrs"},
	} {
		rep, err := Check(context.Background(), "testdata/notportable", target, "./...")
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(rep.Errors)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: errors %s lack %q", target, got, w)
			}
		}
		if want == nil && len(rep.Errors) > 0 {
			t.Errorf("%s: %s", target, got)
		}
		if rep.Checked != 2 { // the package, and the package with its tests
			t.Errorf("%s: %d packages checked in full, want 2", target, rep.Checked)
		}
	}
}
