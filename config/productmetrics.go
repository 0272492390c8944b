package config

import (
	"strings"

	"go.opentelemetry.io/collector/config/confighttp"
)

// ProductMetrics says where the product metrics (rag_*) go out. With no
// endpoint they are part of the collector's own telemetry, whose pull
// endpoint serves no exemplars; with one, the processor serves them there
// in OpenMetrics, exemplars included (docs/adr/0001-product-metrics.md).
type ProductMetrics struct {
	// ServerConfig holds the collector's HTTP server settings: endpoint
	// (host:port; "" keeps the product metrics on the collector's own
	// telemetry), tls, auth, cors… Default: no endpoint.
	ServerConfig confighttp.ServerConfig `mapstructure:",squash"`
}

// Endpoint is where the product metrics are served, "" when they stay on
// the collector's own telemetry.
func (p *ProductMetrics) Endpoint() string { return strings.TrimSpace(p.ServerConfig.NetAddr.Endpoint) }

func defaultProductMetrics() ProductMetrics {
	return ProductMetrics{ServerConfig: confighttp.NewDefaultServerConfig()}
}

func (p *ProductMetrics) validate(add func(string, ...any)) {
	e := p.ServerConfig.NetAddr.Endpoint
	if e != "" && strings.TrimSpace(e) != e {
		add("product_metrics.endpoint: %q has surrounding whitespace", e)
	}
	if strings.Contains(e, "://") {
		add("product_metrics.endpoint: must be host:port to listen on, without a scheme, got %q", e)
	}
}
