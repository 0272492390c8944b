package distbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/loadgen"
)

func TestSpreadOf(t *testing.T) {
	if s := spreadOf([]float64{3, 1, 2}); s != (Spread{1, 2, 3}) {
		t.Fatalf("%+v", s)
	}
	if s := spreadOf([]float64{4, 1, 2, 3}); s != (Spread{1, 2.5, 4}) {
		t.Fatalf("%+v", s)
	}
	if s := spreadOf(nil); s != (Spread{}) {
		t.Fatalf("%+v", s)
	}
}

func meas(p Pipeline, round int, spans int64, cpu time.Duration) Measurement {
	return Measurement{Pipeline: p, Round: round, Window: time.Second, Spans: spans, CPU: cpu, Sent: spans, Received: spans}
}

// Ratios are taken within a round, so that a round where the machine was
// busy for everyone does not show as a difference between pipelines.
func TestRatiosAreToTheBaselineOfTheSameRound(t *testing.T) {
	ps := DefaultPipelines()[:2]
	res := Result{Options: Options{Pipelines: ps}, Measurements: []Measurement{
		meas(ps[0], 1, 100_000, 800*time.Millisecond), // 8 CPU s per M
		meas(ps[1], 1, 50_000, 600*time.Millisecond),  // 12: 1.5×
		meas(ps[0], 2, 200_000, 800*time.Millisecond), // 4: a quiet round
		meas(ps[1], 2, 100_000, 600*time.Millisecond), // 6: 1.5× again
	}}
	sums := res.Summaries()
	if len(sums) != 2 || sums[1].Rounds != 2 {
		t.Fatalf("%+v", sums)
	}
	if r := sums[1].CPURatio; r != (Spread{1.5, 1.5, 1.5}) {
		t.Fatalf("CPU ratio %+v", r)
	}
	if r := sums[1].ThroughputRatio; r != (Spread{0.5, 0.5, 0.5}) {
		t.Fatalf("throughput ratio %+v", r)
	}
	if c := sums[1].CPUPerMillion; c != (Spread{6, 9, 12}) {
		t.Fatalf("CPU %+v", c)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "| (b) + ragprecision 0% | 50 / 75 / 100 | 0.50 / 0.50 / 0.50 | 6.0 / 9.0 / 12.0 | 1.50 / 1.50 / 1.50 | 1.50 |") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// Every generated config is one the distribution accepts (when
// $RAGPRECISION_COLLECTOR names it).
func TestConfigsValidate(t *testing.T) {
	bin := os.Getenv(collectorEnv)
	if bin == "" {
		t.Skip(collectorEnv + " is not set")
	}
	dir := t.TempDir()
	for _, reference := range []string{"", loadgen.ReferenceKey} {
		for _, p := range DefaultPipelines() {
			cfg, err := renderConfig(configParams{Pipeline: p, GRPCPort: "4317", HealthPort: "13133", MetricsPort: "8888",
				Sink: "127.0.0.1:4319", ExportCompression: "gzip", JudgeURL: "http://127.0.0.1:1", ReferenceKey: reference, JudgeDelay: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, p.Name+".yaml")
			if err := os.WriteFile(path, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "validate", "--config", path).CombinedOutput(); err != nil {
				t.Errorf("(%s) reference %q: %v\n%s\n%s", p.Name, reference, err, out, cfg)
			}
		}
	}
}
