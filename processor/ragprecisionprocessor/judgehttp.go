package ragprecisionprocessor

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/ragprecision/ragprecision/config"
)

// judgeTransport is the HTTP transport under the judge's client: the
// default one (which honours HTTPS_PROXY and NO_PROXY), with judge.tls and
// judge.headers applied.
func judgeTransport(ctx context.Context, c config.Judge) (http.RoundTripper, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	tlsCfg, err := c.TLS.LoadTLSConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("judge.tls: %w", err)
	}
	if tlsCfg != nil {
		base.TLSClientConfig = tlsCfg
	}
	if len(c.Headers) == 0 {
		return base, nil
	}
	return &headerTransport{base: base, headers: c.Headers}, nil
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]configopaque.String
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, string(v))
	}
	return t.base.RoundTrip(req)
}
