package config

// Pins of SPEC.md §4 that testdata/invalid and TestDefaults left open: the
// edges of each range are accepted, and the keys without a file of their
// own are refused with their name.

import (
	"strings"
	"testing"
	"time"
)

// The documented edges are valid values, not errors.
func TestSpecRangeEdgesAreAccepted(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"sampling_percentage: 0":             func(c *Config) { c.SamplingPercentage = 0 },
		"sampling_percentage: 100":           func(c *Config) { c.SamplingPercentage = 100 },
		"sampling_percentage: 0.001":         func(c *Config) { c.SamplingPercentage = 0.001 },
		"threshold: 0":                       func(c *Config) { c.Threshold = 0 },
		"threshold: 1":                       func(c *Config) { c.Threshold = 1 },
		"top_k: 0 (all chunks)":              func(c *Config) { c.TopK = 0 },
		"top_k: 1":                           func(c *Config) { c.TopK = 1 },
		"reference_sources: [query]":         func(c *Config) { c.ReferenceSources = []string{"query"} },
		"cache.size: 0 (disabled)":           func(c *Config) { c.Cache.Size = 0 },
		"cache.ttl: 0 (no expiry)":           func(c *Config) { c.Cache.TTL = 0 },
		"max_requests_per_second: 0":         func(c *Config) { c.Judge.MaxRequestsPerSecond = 0 },
		"max_retries: 0":                     func(c *Config) { c.Judge.MaxRetries = 0 },
		"max_pending_spans: 1":               func(c *Config) { c.MaxPendingSpans = 1 },
		"max_chunks: 1":                      func(c *Config) { c.MaxChunks = 1 },
		"max_series: 1":                      func(c *Config) { c.MaxSeries = 1 },
		"trace_join.wait unchecked when off": func(c *Config) { c.TraceJoin.Wait = time.Hour },
		"trace_join on, wait < max_wait": func(c *Config) {
			c.TraceJoin.Enabled = true
			c.TraceJoin.Wait = 29 * time.Second
			c.Judge.ClientConfig.Timeout = time.Second
		},
	} {
		cfg := Default()
		mutate(cfg)
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}

// Keys refused without a testdata/invalid file: each error names its key.
func TestSpecRefusalsNameTheKey(t *testing.T) {
	for want, mutate := range map[string]func(*Config){
		"threshold: must be within [0, 1], got -0.1":      func(c *Config) { c.Threshold = -0.1 },
		"trace_join.max_bytes: must be at least 1, got 0": func(c *Config) { c.TraceJoin.MaxBytes = 0 },
		"max_pending_spans: must be at least 1, got -1":   func(c *Config) { c.MaxPendingSpans = -1 },
		"top_k: must be 0 (all chunks) or positive":       func(c *Config) { c.TopK = -1 },
		"sampling_percentage: must be within [0, 100]":    func(c *Config) { c.SamplingPercentage = 100.5 },
	} {
		cfg := Default()
		mutate(cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
	}
}
