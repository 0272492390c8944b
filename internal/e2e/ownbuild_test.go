package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// builderEnv names the OpenTelemetry Collector Builder `make e2e` installs
// (bin/builder-v0.161.0).
const builderEnv = "RAGPRECISION_BUILDER"

// TestOwnCollectorBuild builds examples/own-collector/builder-config.yaml —
// the manifest of "Add ragprecision to your own collector" — the way a user
// outside this repository would: in a directory of their own, with the
// replaces line pointing at a checkout by absolute path. The collector it
// makes must list ragprecision among its components, and nothing but the
// three it asks for.
func TestOwnCollectorBuild(t *testing.T) {
	t.Parallel()
	builder := requiredBinary(t, builderEnv, "the Collector Builder")
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "examples", "own-collector", "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Elsewhere than this checkout: output in a directory of the test's, the
	// checkout named by absolute path.
	dir := t.TempDir()
	manifest := string(raw)
	for old, repl := range map[string]string{
		"output_path: ./build/otelcol-own":               "output_path: " + filepath.Join(dir, "otelcol-own"),
		"github.com/ragprecision/ragprecision => ../../": "github.com/ragprecision/ragprecision => " + root,
	} {
		if !strings.Contains(manifest, old) {
			t.Fatalf("the example manifest has no %q", old)
		}
		manifest = strings.Replace(manifest, old, repl, 1)
	}
	var parsed struct {
		Processors []struct{ GoMod, Import string } `yaml:"processors"`
	}
	if err := yaml.Unmarshal([]byte(manifest), &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed.Processors) != 1 || !strings.HasPrefix(parsed.Processors[0].GoMod, "github.com/ragprecision/ragprecision v") ||
		parsed.Processors[0].Import != "github.com/ragprecision/ragprecision/processor/ragprecisionprocessor" {
		t.Errorf("processors: %+v", parsed.Processors)
	}
	path := writeFile(t, dir, "builder-config.yaml", manifest)
	build := exec.Command(builder, "--config", path)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("builder: %v\n%s", err, out)
	}

	out, err := exec.Command(filepath.Join(dir, "otelcol-own", "otelcol-own"), "components").CombinedOutput()
	if err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	var components struct {
		Receivers, Processors, Exporters, Connectors, Extensions []struct {
			Name   string `yaml:"name"`
			Module string `yaml:"module"`
		}
	}
	if err := yaml.Unmarshal(out, &components); err != nil {
		t.Fatalf("components output: %v\n%s", err, out)
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
		t.Errorf("processors %q, want ragprecision", got)
	} else if m := components.Processors[0].Module; !strings.HasPrefix(m, "github.com/ragprecision/ragprecision ") {
		t.Errorf("ragprecision from module %q", m)
	}
	if got := names(components.Receivers) + "|" + names(components.Exporters) + "|" + names(components.Connectors) + "|" + names(components.Extensions); got != "otlp|debug||" {
		t.Errorf("receivers|exporters|connectors|extensions = %q, want otlp|debug||", got)
	}

	// And it runs ragprecision: a configuration that uses it validates.
	cfg := writeFile(t, dir, "config.yaml", `
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
	if out, err := exec.Command(filepath.Join(dir, "otelcol-own", "otelcol-own"), "validate", "--config", cfg).CombinedOutput(); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
	t.Logf("built examples/own-collector/builder-config.yaml out of tree; components: receivers %s, processors %s (%s), exporters %s",
		names(components.Receivers), names(components.Processors), components.Processors[0].Module, names(components.Exporters))
}
