package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestValidateReportsEveryProblem runs the distribution's `validate` (what
// `make validate` runs) on a configuration with four mistakes, one of which
// the collector's decoder alone would stop at: every one must be reported,
// with its key, its value and what is allowed.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	cfg := writeFile(t, t.TempDir(), "config.yaml", `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
processors:
  ragprecision:
    max_wait: 30x
    threshold: 1.5
    judge:
      model: openia:gpt-4o-mini
      api_key: sk-example
      max_retires: 2
exporters:
  debug: {}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [ragprecision]
      exporters: [debug]
`)
	out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("validate accepted four mistakes:\n%s", out)
	}
	for _, want := range []string{
		`max_wait: "30x" is not a duration; write a number and a unit (ns, us, ms, s, m, h), e.g. max_wait: 30s`,
		`threshold: must be within [0, 1], got 1.5`,
		`judge.model: unknown provider "openia" in "openia:gpt-4o-mini" (did you mean openai:gpt-4o-mini?); allowed providers: openai, azure, anthropic, google, ollama, builtin`,
		`judge.max_retires: unknown key (did you mean judge.max_retries?); allowed under judge: api_key,`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("validate's output lacks\n  %s\n%s", want, out)
		}
	}
}
