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
	cc := c.HTTPClientConfig()
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
