package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeCollectorFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A collector file is read as the collector reads it: environment
// variables resolved, the rest at its defaults, the only ragprecision
// processor found without being named.
func TestFromCollectorFile(t *testing.T) {
	t.Setenv("RECORDED_TOP_K", "3")
	path := writeCollectorFile(t, `
receivers: {otlp: {protocols: {grpc: {}}}}
processors:
  batch: {}
  ragprecision/recorded:
    top_k: ${env:RECORDED_TOP_K}
    reference_sources: [answer, query]
    attributes: {chunks: my.chunks, data_source: index}
    judge: {model: openai:gpt-4o-mini, api_key: "${env:RECORDING_KEY_THAT_IS_NOT_SET}"}
`)
	cfg, id, err := FromCollectorFile(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	if id != "ragprecision/recorded" || cfg.TopK != 3 || strings.Join(cfg.ReferenceSources, ",") != "answer,query" ||
		cfg.Attributes.Chunks != "my.chunks" || cfg.Attributes.DataSource != "index" ||
		cfg.Judge.Model.String() != "openai:gpt-4o-mini" || cfg.MaxChunks != Default().MaxChunks {
		t.Fatalf("read %s: %+v", id, cfg)
	}
	if cfg.Validate() == nil {
		t.Fatal("the missing API key is not reported by Validate")
	}
}

func TestFromCollectorFileRefuses(t *testing.T) {
	ctx := context.Background()
	two := writeCollectorFile(t, "processors:\n  ragprecision:\n  ragprecision/b: {top_k: 2}\n")
	if _, _, err := FromCollectorFile(ctx, two, ""); err == nil || !strings.Contains(err.Error(), "ragprecision, ragprecision/b") {
		t.Fatalf("two processors and no name: %v", err)
	}
	cfg, id, err := FromCollectorFile(ctx, two, "ragprecision")
	if err != nil || id != "ragprecision" || cfg.TopK != 0 {
		t.Fatalf("a processor with no settings: %v %+v", err, cfg)
	}
	if _, _, err := FromCollectorFile(ctx, two, "ragprecision/c"); err == nil || !strings.Contains(err.Error(), "no processor ragprecision/c") {
		t.Fatalf("a processor not in the file: %v", err)
	}
	none := writeCollectorFile(t, "processors:\n  batch: {}\n")
	if _, _, err := FromCollectorFile(ctx, none, ""); err == nil || !strings.Contains(err.Error(), "no ragprecision processor") {
		t.Fatalf("no processor: %v", err)
	}
	unknown := writeCollectorFile(t, "processors:\n  ragprecision: {top_kk: 2}\n")
	if _, _, err := FromCollectorFile(ctx, unknown, ""); err == nil || !strings.Contains(err.Error(), "top_kk") {
		t.Fatalf("an unknown key: %v", err)
	}
	if _, _, err := FromCollectorFile(ctx, filepath.Join(t.TempDir(), "missing.yaml"), ""); err == nil {
		t.Fatal("a missing file is accepted")
	}
}
