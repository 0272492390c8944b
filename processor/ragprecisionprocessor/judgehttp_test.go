package ragprecisionprocessor

import (
	"encoding/pem"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

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
		c.Judge.ClientConfig.TLS.CAFile = ca
		c.Judge.ClientConfig.Headers = configopaque.MapList{{Name: "X-Gateway-Key", Value: "gw-secret"}}
	})
	b := newBatch("svc")
	b.project("retrieve", question, "Paris", capitalChunks...)
	h.consume(b.td)
	h.waitSpans(1)
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
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
	expectStatus(t, untrusted.span("retrieve"), ragattr.StatusJudgeError)
}

func TestJudgeTLSConfigErrorsAtStart(t *testing.T) {
	f := NewFactory()
	cfg := config.Default()
	llmJudge("https://judge.invalid/v1")(cfg)
	cfg.Judge.ClientConfig.TLS.CAFile = "/nonexistent/ca.pem"
	p, err := f.CreateTraces(t.Context(), processortestSettings(), cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(t.Context(), componenttest.NewNopHost())
	if err == nil || !strings.Contains(err.Error(), "ca.pem") {
		t.Fatalf("a missing CA file must fail at start-up, naming the file: %v", err)
	}
	_ = p.Shutdown(t.Context())
}
