package ragprecisionprocessor

import (
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// The judge's HTTP client is the collector's: an authenticator extension
// named under judge.auth signs its requests.
func TestJudgeUsesAuthExtension(t *testing.T) {
	srv := chatServer(t, chattest.KeywordJudge("Paris"))
	id := component.MustNewID("testauth")
	host := hostWithExtensions{ext: map[component.ID]component.Component{id: &headerAuth{header: "X-Signed", value: "by-extension"}}}
	h := newHarnessFull(t, new(consumertest.TracesSink), nil, host, func(c *config.Config) {
		llmJudge(srv.URL)(c)
		c.Judge.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
	})
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", "Paris.")
	h.consume(b.td)
	h.waitSpans(1)
	if got := srv.Requests()[0].Header.Get("X-Signed"); got != "by-extension" {
		t.Fatalf("X-Signed %q: the auth extension was not used", got)
	}
}

// headerAuth is an authenticator extension adding one header.
type headerAuth struct {
	component.StartFunc
	component.ShutdownFunc
	header, value string
}

func (a *headerAuth) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set(a.header, a.value)
		return base.RoundTrip(r)
	}), nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
