package config

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// The check for unknown keys knows every key the collector's HTTP client
// and server settings take (squashed, in optional sections, in maps and
// lists): a config that uses them decodes.
func TestUnmarshalKnowsNestedKeys(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"judge": map[string]any{
			"model":    "openai:gpt-4o-mini",
			"api_key":  "sk-x",
			"endpoint": "https://llm.example.com/v1",
			"timeout":  "5s",
			"headers":  map[string]any{"X-Team": "search"},
			"tls":      map[string]any{"ca_file": "/etc/ca.pem", "insecure_skip_verify": false, "min_version": "1.2"},
			"auth":     map[string]any{"authenticator": "oauth2client"},
			"keepalive": map[string]any{
				"idle_conn_timeout": "90s", "max_idle_conns": 10,
			},
			"compression":        "gzip",
			"compression_params": map[string]any{"level": 1},
			"pricing":            map[string]any{"input_per_million": 0.15, "output_per_million": 0.6, "currency": "USD"},
			"cascade":            map[string]any{"min_confidence": 0.8},
		},
		"shadow_judge":    map[string]any{"model": "builtin:lexical", "percentage": 0, "max_retries": 1},
		"product_metrics": map[string]any{"endpoint": "127.0.0.1:9464", "tls": map[string]any{"cert_file": "/c", "key_file": "/k"}},
		"cache":           map[string]any{"size": 10, "ttl": "1h"},
		"trace_join":      map[string]any{"enabled": true, "wait": "5s"},
		"attributes":      map[string]any{"variant": "service.version"},
	})
	cfg := Default()
	if err := cfg.Unmarshal(conf); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if cfg.Judge.ClientConfig.TLS.CAFile != "/etc/ca.pem" || cfg.ProductMetrics.Endpoint() != "127.0.0.1:9464" {
		t.Errorf("not decoded: tls.ca_file %q, product_metrics.endpoint %q", cfg.Judge.ClientConfig.TLS.CAFile, cfg.ProductMetrics.Endpoint())
	}
}

// A key that cannot be decoded leaves the others decoded, and a secret's
// value is never repeated in a message.
func TestUnmarshalReportsWithoutSecrets(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"threshold": 0.5,
		"max_wait":  "ten seconds",
		"judge":     map[string]any{"model": "openai:gpt-4o-mini", "api_key": map[string]any{"sk-secret-value": 1}},
	})
	cfg := Default()
	err := cfg.Unmarshal(conf)
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{`max_wait: "ten seconds" is not a duration`, "judge.api_key: must be a string, got a value (not shown: it is a secret)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if n := strings.Count("\n"+msg, "\njudge.api_key: "); n != 1 {
		t.Errorf("judge.api_key reported %d times, want once (what Validate says of the default is no news):\n%s", n, msg)
	}
	if strings.Contains(msg, "sk-secret-value") {
		t.Errorf("the message repeats the secret: %q", msg)
	}
	if cfg.Threshold != 0.5 || cfg.Judge.Model.String() != "openai:gpt-4o-mini" {
		t.Errorf("the keys that decode were not decoded: threshold %v, model %q", cfg.Threshold, cfg.Judge.Model)
	}
}
