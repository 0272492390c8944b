package ragprecisionprocessor

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/component"

	"github.com/ragprecision/ragprecision/config"
)

// judgeHTTPClient builds the judge's HTTP client from the collector's own
// client settings (confighttp), as every HTTP exporter does, so that auth
// extensions, proxy_url, tls, headers and compression work the same way
// here. It runs in Start: authenticator extensions are found through the
// host.
func judgeHTTPClient(ctx context.Context, c config.Judge, host component.Host, set component.TelemetrySettings) (*http.Client, error) {
	cc := c.ClientConfig
	// judge.timeout bounds each attempt through its context, which also
	// tells a slow judge from the span's own deadline; a client-wide
	// timeout would blur the two.
	cc.Timeout = 0
	if cc.MaxIdleConnsPerHost == 0 {
		// Go keeps 2 idle connections per host by default: with 8 requests
		// in flight, every other one would open a new connection (a TLS
		// handshake against a remote provider).
		cc.MaxIdleConnsPerHost = max(c.MaxConcurrency, 2)
	}
	var extensions map[component.ID]component.Component
	if host != nil {
		extensions = host.GetExtensions()
	}
	hc, err := cc.ToClient(ctx, extensions, set)
	if err != nil {
		return nil, fmt.Errorf("judge: building the HTTP client from tls, auth, proxy_url…: %w", err)
	}
	return hc, nil
}
