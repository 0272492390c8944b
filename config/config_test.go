package config

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// load unmarshals the section name of a testdata file over the defaults and
// validates it, as the collector does at start-up.
func load(t *testing.T, path, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(path)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	if err := sub.Unmarshal(cfg); err != nil {
		return cfg, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestDefaults(t *testing.T) {
	cfg, err := load(t, filepath.Join("testdata", "config.yaml"), "ragprecision")
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	if cfg.SamplingPercentage != 100 || cfg.Threshold != 0.7 || cfg.TopK != 0 ||
		strings.Join(cfg.ReferenceSources, ",") != "reference,answer" ||
		cfg.MaxWait != 30*time.Second || cfg.MaxPendingSpans != 10000 ||
		cfg.TraceJoin.Enabled || cfg.TraceJoin.Wait != 10*time.Second || cfg.TraceJoin.MaxTraces != 10000 || cfg.TraceJoin.MaxBytes != 16<<20 ||
		cfg.Attributes != (Attributes{}) ||
		cfg.Judge.Model.String() != "builtin:lexical" || cfg.Judge.BaseURL != "" || cfg.Judge.APIKey != "" ||
		cfg.Judge.Mode != "per_chunk" || cfg.Judge.ClientConfig.Timeout != 10*time.Second ||
		cfg.Judge.MaxConcurrency != 8 || cfg.Judge.MaxRequestsPerSecond != 10 ||
		cfg.Judge.MaxRetries != 3 || cfg.Judge.MaxChunkChars != 4000 ||
		cfg.Cache.Size != 100000 || cfg.Cache.TTL != 24*time.Hour {
		t.Fatalf("defaults differ from the README's: %+v", cfg)
	}
	if cfg.MaxPendingBytes != 256<<20 || cfg.ShutdownTimeout != 5*time.Second || cfg.MaxRetrievalBytes != 1<<20 ||
		cfg.MaxChunks != d.MaxChunks || cfg.MaxRetrievalBytes != d.MaxRetrievalBytes || cfg.MaxSeries != d.MaxSeries || cfg.Judge.ResponseFormat != "auto" {
		t.Fatalf("extension defaults: %+v", cfg)
	}
	if cfg.AdaptiveSampling != (AdaptiveSampling{MinJudgedPerHour: 100, MinPercentage: 0.1, MaxPercentage: 100, AdjustInterval: 30 * time.Second}) {
		t.Fatalf("adaptive_sampling defaults: %+v", cfg.AdaptiveSampling)
	}
}

// The spend defaults to 80% of the judge's budget; a set one wins.
func TestAdaptiveSpend(t *testing.T) {
	cfg := Default()
	cfg.Judge.MaxRequestsPerSecond = 10
	if got := cfg.Spend(); got != 8 {
		t.Errorf("default spend %v, want 8", got)
	}
	cfg.AdaptiveSampling.JudgeRequestsPerSecond = 3
	if got := cfg.Spend(); got != 3 {
		t.Errorf("set spend %v, want 3", got)
	}
	// builtin:lexical with an explicit spend is valid.
	cfg.AdaptiveSampling.Enabled = true
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

func TestFullConfig(t *testing.T) {
	cfg, err := load(t, filepath.Join("testdata", "config.yaml"), "ragprecision/full")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		SamplingPercentage: 25,
		Threshold:          0.8,
		TopK:               5,
		ReferenceSources:   []string{"reference", "answer", "query"},
		MaxWait:            60 * time.Second,
		MaxPendingSpans:    2000,
		MaxPendingBytes:    64 << 20,
		ShutdownTimeout:    10 * time.Second,
		MaxChunks:          50,
		MaxRetrievalBytes:  1 << 20,
		MaxSeries:          200,
		TraceJoin:          TraceJoin{Enabled: true, Wait: 5 * time.Second, MaxTraces: 500, MaxBytes: 1 << 20},
		Attributes:         Attributes{Query: "app.query", Answer: "app.answer", Reference: "app.expected", Chunks: "app.chunks", DataSource: "app.index", Variant: "service.version"},
		Judge: Judge{
			Model: mustParseModel("openai:gpt-4o-mini"), BaseURL: "http://litellm.internal:4000/v1",
			Cascade: Cascade{MinConfidence: 0.6}, Criteria: "Relevant only if it states the policy number.",
			APIKey: configopaque.String("sk-secret-value"), Mode: "batched", ResponseFormat: "json_object",
			MaxConcurrency: 4, MaxRequestsPerSecond: 2.5, MaxRetries: 5, MaxChunkChars: 2000,
			Pricing:      Pricing{InputPerMillion: 0.15, OutputPerMillion: 0.6, Currency: "EUR"},
			Canary:       Canary{File: "testdata/canary.jsonl", Interval: 30 * time.Minute, MaxRetrievals: 20},
			ClientConfig: confighttp.NewDefaultClientConfig(),
		},
		Cache:       Cache{Size: 5000, TTL: time.Hour},
		ShadowJudge: defaultShadowJudge(),
		AdaptiveSampling: AdaptiveSampling{Enabled: true, JudgeRequestsPerSecond: 2, MinJudgedPerHour: 200,
			MinPercentage: 0.5, MaxPercentage: 50, AdjustInterval: time.Minute},
	}
	want.ShadowJudge.Percentage = 5
	want.ShadowJudge.Model = mustParseModel("openai:gpt-4.1-mini")
	want.ShadowJudge.APIKey = "sk-shadow-value"
	want.ShadowJudge.MaxRequestsPerSecond = 1
	want.ShadowJudge.ClientConfig.Timeout = 15 * time.Second
	want.ShadowJudge.ClientConfig = withUnexportedOf(cfg.ShadowJudge.ClientConfig, want.ShadowJudge.ClientConfig)
	want.Judge.ClientConfig.Timeout = 20 * time.Second
	want.Judge.ClientConfig.Headers = configopaque.MapList{{Name: "X-Gateway-Key", Value: "gw-secret"}}
	want.Judge.ClientConfig.ProxyURL = "http://proxy.internal:3128"
	want.Judge.ClientConfig.TLS.CAFile = "/etc/ssl/private-ca.pem"
	want.Judge.ClientConfig.TLS.ServerName = "llm.internal"
	want.ProductMetrics = defaultProductMetrics()
	want.ProductMetrics.ServerConfig.NetAddr.Endpoint = "0.0.0.0:9465"
	// Unexported bookkeeping of confighttp's Unmarshal is not compared.
	want.Judge.ClientConfig = withUnexportedOf(cfg.Judge.ClientConfig, want.Judge.ClientConfig)
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
}

// The API key is opaque: printing the config never shows it.
func TestAPIKeyIsNotPrinted(t *testing.T) {
	cfg, err := load(t, filepath.Join("testdata", "config.yaml"), "ragprecision/full")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		cfg.Judge.APIKey.String(),
		strings.ReplaceAll(strings.ReplaceAll(fmtAny(cfg), "\n", ""), " ", ""),
	} {
		if strings.Contains(s, "sk-secret-value") {
			t.Fatalf("api key printed: %s", s)
		}
	}
}

// Each file in testdata/invalid names, on its first lines, the errors it
// must produce, all at once; each error must name the key.
func TestInvalidConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid configs: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			wants := wantLines(t, f)
			_, err := load(t, f, "ragprecision")
			if err == nil {
				t.Fatalf("accepted; want errors %q", wants)
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n  %v\ndoes not contain\n  %s", err, want)
				}
			}
			// One problem, one error: config and judge must not both
			// report it, in words that may contradict each other.
			seen := map[string]bool{}
			for _, line := range strings.Split(err.Error(), "\n") {
				key, _, _ := strings.Cut(line, ": ")
				if seen[key] {
					t.Errorf("%s reported twice:\n%v", key, err)
				}
				seen[key] = true
			}
		})
	}
}

// wantLines returns the errors a file in testdata/invalid names: one per
// "# want: " line at its top, every one of them reported at once.
func wantLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wants []string
	for s := bufio.NewScanner(f); s.Scan(); {
		want, ok := strings.CutPrefix(s.Text(), "# want: ")
		if !ok {
			break
		}
		wants = append(wants, want)
	}
	if len(wants) == 0 {
		t.Fatalf("%s: first line must be '# want: <error>'", path)
	}
	return wants
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := Default()
	cfg.SamplingPercentage = 101
	cfg.Threshold = -1
	cfg.Judge.Mode = "x"
	err := cfg.Validate()
	for _, key := range []string{"sampling_percentage:", "threshold:", "judge.mode:"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%v does not mention %s", err, key)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func fmtAny(v any) string { return fmt.Sprintf("%+v", v) }

// withUnexportedOf returns want with got's unexported fields, which tests
// cannot set.
func withUnexportedOf(got, want confighttp.ClientConfig) confighttp.ClientConfig {
	out := got
	gv, wv, ov := reflect.ValueOf(&got).Elem(), reflect.ValueOf(&want).Elem(), reflect.ValueOf(&out).Elem()
	for i := 0; i < gv.NumField(); i++ {
		if gv.Type().Field(i).IsExported() {
			ov.Field(i).Set(wv.Field(i))
		}
	}
	return out
}

// The documented edges are valid values, not errors.
func TestRangeEdgesAreAccepted(t *testing.T) {
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
func TestRefusalsNameTheKey(t *testing.T) {
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
