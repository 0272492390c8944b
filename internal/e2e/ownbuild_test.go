package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/semver"
)

// builderEnv names the OpenTelemetry Collector Builder `make e2e` installs
// (bin/builder-v0.161.0).
const builderEnv = "RAGPRECISION_BUILDER"

// TestOwnCollectorBuild builds examples/own-collector/builder-config.yaml —
// the manifest of "Add ragprecision to your own collector" — as a newcomer
// would: in a fresh clone, with the shell commands docs/DEPLOYING.md shows (so
// that a step the page leaves out fails here), then with `make own-build` in
// another fresh clone. Each collector must list ragprecision among its
// components, nothing but the three the manifest asks for, and validate a
// configuration that uses ragprecision.
func TestOwnCollectorBuild(t *testing.T) {
	t.Parallel()
	builder := requiredBinary(t, builderEnv, "the Collector Builder")
	root := repoRoot(t)
	commands := docOwnCollectorCommands(t, root)

	// The page's commands, with `builder` on the PATH as `go install` puts
	// it there; the install itself is the one line not run.
	bin := t.TempDir()
	if err := os.Symlink(builder, filepath.Join(bin, "builder")); err != nil {
		t.Fatal(err)
	}
	clone := freshClone(t, root)
	var components []byte
	for _, line := range commands {
		if strings.HasPrefix(line, "go install ") {
			continue
		}
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docs/DEPLOYING.md's %q in a fresh clone: %v\n%s", line, err, out)
		}
		components = out
	}
	checkOwnCollector(t, "docs/DEPLOYING.md's commands", filepath.Join(clone, "build", "otelcol-own", "otelcol-own"), components)

	clone = freshClone(t, root)
	make := exec.Command("make", "--no-print-directory", "own-build", "BUILDER="+builder)
	make.Dir = clone
	out, err := make.CombinedOutput()
	if err != nil {
		t.Fatalf("make own-build in a fresh clone: %v\n%s", err, out)
	}
	// make echoes its commands: the components are what follows the last one.
	components = afterLast(out, []byte("otelcol-own components\n"))
	checkOwnCollector(t, "make own-build", filepath.Join(clone, "build", "otelcol-own", "otelcol-own"), components)
}

// docOwnCollectorCommands returns the lines of docs/DEPLOYING.md's shell block
// that builds examples/own-collector, comments removed.
func docOwnCollectorCommands(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docs", "DEPLOYING.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1)
	for _, b := range blocks {
		if !strings.Contains(b[1], "builder --config examples/own-collector/builder-config.yaml") {
			continue
		}
		var lines []string
		for _, line := range strings.Split(b[1], "\n") {
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" {
				lines = append(lines, line)
			}
		}
		return lines
	}
	t.Fatal("docs/DEPLOYING.md has no sh block that runs builder --config examples/own-collector/builder-config.yaml")
	return nil
}

// freshClone clones the checkout into a directory of the test's and puts the
// working tree's version of every tracked file on it: what a fresh clone of
// this commit plus the uncommitted edits would hold, without bin/ or build/.
func freshClone(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ragprecision")
	if out, err := exec.Command("git", "clone", "--quiet", root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = root
	files, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			os.Remove(filepath.Join(dir, f))
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); !os.IsNotExist(err) {
		t.Fatalf("the fresh clone has a build directory (%v): the test would not see a missing mkdir", err)
	}
	return dir
}

// afterLast returns what follows the last sep in s, or nil.
func afterLast(s, sep []byte) []byte {
	i := bytes.LastIndex(s, sep)
	if i < 0 {
		return nil
	}
	return s[i+len(sep):]
}

// checkOwnCollector checks the `components` output of the own collector at
// path, and that it validates a configuration that uses ragprecision.
func checkOwnCollector(t *testing.T, how, path string, out []byte) {
	t.Helper()
	var components struct {
		Receivers, Processors, Exporters, Connectors, Extensions []struct {
			Name   string `yaml:"name"`
			Module string `yaml:"module"`
		}
	}
	if err := yaml.Unmarshal(out, &components); err != nil {
		t.Fatalf("%s: components output: %v\n%s", how, err, out)
	}
	names := func(list []struct {
		Name   string `yaml:"name"`
		Module string `yaml:"module"`
	}) string {
		var n []string
		for _, c := range list {
			n = append(n, c.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(components.Processors); got != "ragprecision" {
		t.Errorf("%s: processors %q, want ragprecision", how, got)
	} else if m := components.Processors[0].Module; !strings.HasPrefix(m, "github.com/ragprecision/ragprecision ") {
		t.Errorf("%s: ragprecision from module %q", how, m)
	}
	if got := names(components.Receivers) + "|" + names(components.Exporters) + "|" + names(components.Connectors) + "|" + names(components.Extensions); got != "otlp|debug||" {
		t.Errorf("%s: receivers|exporters|connectors|extensions = %q, want otlp|debug||", how, got)
	}

	// And it runs ragprecision: a configuration that uses it validates.
	cfg := writeFile(t, t.TempDir(), "config.yaml", `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
processors:
  ragprecision:
    judge:
      model: builtin:lexical
exporters:
  debug: {}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision]
      exporters: [debug]
`)
	if out, err := exec.Command(path, "validate", "--config", cfg).CombinedOutput(); err != nil {
		t.Errorf("%s: validate: %v\n%s", how, err, out)
	}
	t.Logf("%s: components: receivers %s, processors %s, exporters %s",
		how, names(components.Receivers), names(components.Processors), names(components.Exporters))
}

// TestManifestsUseOneRelease enforces, for the builder manifests this
// repository ships, what the builder does not: every collector module of a
// manifest from one release — one v0 (beta) version for core and contrib
// modules, one v1 (stable) version — and that release the one go.mod
// requires: the router is built at it too, so that a cold build compiles
// the collector's packages once for both binaries.
func TestManifestsUseOneRelease(t *testing.T) {
	root := repoRoot(t)
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+go\.opentelemetry\.io/collector/component (v1\.\d+\.\d+)`).FindSubmatch(goMod)
	if m == nil {
		t.Fatal("go.mod does not require go.opentelemetry.io/collector/component")
	}
	ourStable := string(m[1])
	for _, path := range []string{
		"builder-config.yaml",
		"examples/own-collector/builder-config.yaml",
		"deploy/router/builder-config.yaml",
	} {
		raw, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		var manifest struct {
			Receivers, Processors, Exporters, Extensions, Connectors, Providers, Converters []struct {
				GoMod string `yaml:"gomod"`
			}
		}
		if err := yaml.Unmarshal(raw, &manifest); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		versions := map[string]map[string][]string{"v0": {}, "v1": {}}
		for _, list := range [][]struct {
			GoMod string `yaml:"gomod"`
		}{manifest.Receivers, manifest.Processors, manifest.Exporters, manifest.Extensions, manifest.Connectors, manifest.Providers, manifest.Converters} {
			for _, c := range list {
				module, version, _ := strings.Cut(c.GoMod, " ")
				if !strings.HasPrefix(module, "go.opentelemetry.io/collector/") && !strings.HasPrefix(module, "github.com/open-telemetry/opentelemetry-collector-contrib/") {
					continue
				}
				major, _, _ := strings.Cut(version, ".")
				if versions[major] == nil {
					t.Errorf("%s: %s at %q, neither v0 nor v1", path, module, version)
					continue
				}
				versions[major][version] = append(versions[major][version], module)
			}
		}
		for major, byVersion := range versions {
			if len(byVersion) > 1 {
				t.Errorf("%s mixes collector releases: %s modules at %v", path, major, byVersion)
			}
		}
		for v := range versions["v1"] {
			if v != ourStable {
				t.Errorf("%s: stable modules at %s, but go.mod requires go.opentelemetry.io/collector/component %s", path, v, ourStable)
			}
		}
		if len(versions["v0"]) == 0 {
			t.Errorf("%s: no collector module found", path)
		}
	}
}

// TestBuilderAllowsMixedVersions holds docs/DEPLOYING.md to what the builder
// v0.161.0 does with a manifest that mixes collector releases: it generates
// the sources and resolves the modules without a complaint, also with
// --skip-strict-versioning=false (compiling is left out: it adds minutes and
// proves nothing more about the check). Were the builder to refuse it, the
// page would have to say so again.
func TestBuilderAllowsMixedVersions(t *testing.T) {
	t.Parallel()
	builder := requiredBinary(t, builderEnv, "the Collector Builder")
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "examples", "own-collector", "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := string(raw)
	for old, repl := range map[string]string{
		"otlpreceiver v0.161.0":                          "otlpreceiver v0.160.0",
		"output_path: ./build/otelcol-own":               "output_path: " + filepath.Join(dir, "otelcol-own"),
		"github.com/ragprecision/ragprecision => ../../": "github.com/ragprecision/ragprecision => " + root,
	} {
		if !strings.Contains(manifest, old) {
			t.Fatalf("the example manifest has no %q", old)
		}
		manifest = strings.Replace(manifest, old, repl, 1)
	}
	path := writeFile(t, dir, "builder-config.yaml", manifest)
	build := exec.Command(builder, "--config", path, "--skip-compilation", "--skip-strict-versioning=false")
	build.Dir = dir
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("the builder refused a manifest with otlpreceiver v0.160.0 next to v0.161.0 (docs/DEPLOYING.md says it does not): %v\n%s", err, out)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "otelcol-own", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "go.opentelemetry.io/collector/receiver/otlpreceiver v0.160.0") {
		t.Fatalf("the generated go.mod does not keep otlpreceiver v0.160.0:\n%s", gomod)
	}
}

// TestBuildsShareModuleVersions keeps what the Go build cache can share
// between the builds of `make test`: a package is compiled once for all of
// them only where they use the same version of its module (and of every
// module below it). The distribution's go.mod, which the builder resolves,
// is the reference:
//   - this module's go.mod (the tests, go vet) and the tools module's
//     (mdatagen) require the distribution's version of every module both
//     name: `go get module@version` where they fall behind;
//   - the router's manifest pins (replaces) the distribution's version
//     where the loadbalancing exporter alone would resolve an older one.
//     The router keeps newer versions that its exporter requires.
//
// A version out of step costs no correctness, only the minutes of
// compiling gRPC or golang.org/x/sys's dependants twice on a cold cache.
func TestBuildsShareModuleVersions(t *testing.T) {
	t.Parallel()
	requiredBinary(t, collectorEnv, "the distribution (make build)")
	root := repoRoot(t)
	dist := moduleVersions(t, filepath.Join(root, "build", "otelcol-ragprecision", "go.mod"))
	for _, path := range []string{"go.mod", filepath.Join("internal", "tools", "go.mod")} {
		for module, version := range moduleVersions(t, filepath.Join(root, path)) {
			if want, ok := dist[module]; ok && version != want {
				t.Errorf("%s requires %s %s, the distribution %s: go get %s@%s", path, module, version, want, module, want)
			}
		}
	}
	routerBinary(t)
	for module, version := range moduleVersions(t, filepath.Join(root, "build", "otelcol-router", "go.mod")) {
		if want, ok := dist[module]; ok && semver.Compare(version, want) < 0 {
			t.Errorf("the router builds %s %s, the distribution %s: add `- %s => %s %s` to the replaces of deploy/router/builder-config.yaml",
				module, version, want, module, module, want)
		}
	}
}

// moduleVersions reads the modules a go.mod requires, at the versions its
// replace directives choose.
func moduleVersions(t *testing.T, goMod string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", goMod).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", goMod, err)
	}
	type version struct{ Path, Version string }
	var parsed struct {
		Require []version
		Replace []struct{ Old, New version }
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatalf("%s: %v", goMod, err)
	}
	versions := map[string]string{}
	for _, r := range parsed.Require {
		versions[r.Path] = r.Version
	}
	for _, r := range parsed.Replace {
		if _, ok := versions[r.Old.Path]; ok && r.New.Version != "" {
			versions[r.Old.Path] = r.New.Version
		}
	}
	return versions
}
