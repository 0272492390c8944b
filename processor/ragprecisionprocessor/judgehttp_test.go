package ragprecisionprocessor

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
)

// A judge behind https with a private CA is reached with judge.tls.ca_file,
// and judge.headers reach it; without the CA the span is a judge_error.
func TestJudgeOverTLSWithHeaders(t *testing.T) {
	srv := chattest.NewTLSServer(chattest.KeywordJudge("Paris"))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.TLS.CAFile = ca
		c.Judge.Headers = map[string]configopaque.String{"X-Gateway-Key": "gw-secret"}
	})
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	if got := attrStr(h.span("retrieve"), attrStatus); got != statusScored {
		t.Fatalf("status %q", got)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("X-Gateway-Key") != "gw-secret" || r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Fatalf("headers %v", r.Header)
		}
	}

	untrusted := newHarness(t, llmJudge(srv.URL))
	b = newBatch("svc")
	b.project("retrieve", question, "Paris", "Paris again")
	untrusted.consume(b.td)
	untrusted.waitSpans(1)
	expectStatus(t, untrusted.span("retrieve"), statusJudgeError)
}

func TestJudgeTLSConfigErrorsAtCreation(t *testing.T) {
	f := NewFactory()
	cfg := config.Default()
	cfg.Judge.TLS.CAFile = "/nonexistent/ca.pem"
	_, err := f.CreateTraces(t.Context(), processortestSettings(), cfg, nil)
	if err == nil {
		t.Fatal("a missing CA file must fail at start-up")
	}
}
