package ragprecisionprocessor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// productEndpoint serves the product metrics (rag_*) in OpenMetrics, whose
// exemplars link a score to its trace, from the processor's own HTTP
// endpoint: the collector's own pull endpoint serves no exemplars
// (docs/adr/0001-product-metrics.md). The collector builds a processor per
// pipeline, so the instances configured with one endpoint share it, and
// its instruments: their scores add up as one collector's.
type productEndpoint struct {
	endpoint string
	refs     int
	builder  *metadata.TelemetryBuilder
	sums     *diagnosticSums
	provider *sdkmetric.MeterProvider
	server   *http.Server
	served   chan struct{}
}

// productEndpoints are the endpoints in use in this process, by address.
var productEndpoints = struct {
	sync.Mutex
	byAddr map[string]*productEndpoint
}{byAddr: map[string]*productEndpoint{}}

// acquireProductEndpoint returns the endpoint cfg names, started on first
// use.
func acquireProductEndpoint(ctx context.Context, cfg *config.ProductMetrics, host component.Host, set component.TelemetrySettings) (*productEndpoint, error) {
	productEndpoints.Lock()
	defer productEndpoints.Unlock()
	addr := cfg.Endpoint()
	if e, ok := productEndpoints.byAddr[addr]; ok {
		e.refs++
		return e, nil
	}
	e, err := startProductEndpoint(ctx, cfg, host, set)
	if err != nil {
		return nil, fmt.Errorf("product_metrics.endpoint %s: %w", addr, err)
	}
	productEndpoints.byAddr[addr] = e
	return e, nil
}

func startProductEndpoint(ctx context.Context, cfg *config.ProductMetrics, host component.Host, set component.TelemetrySettings) (*productEndpoint, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(
		otelprom.WithRegisterer(registry),
		// The names and labels of the collector's own endpoint, so that
		// the rules and the dashboard read either unchanged.
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithoutSuffixes),
		otelprom.WithoutScopeInfo(),
		otelprom.WithoutTargetInfo(),
	)
	if err != nil {
		return nil, err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithExemplarFilter(exemplar.TraceBasedFilter))
	productSet := set
	productSet.MeterProvider = provider
	builder, err := metadata.NewTelemetryBuilder(productSet)
	if err != nil {
		return nil, errors.Join(err, provider.Shutdown(ctx))
	}
	sums, err := newDiagnosticSums(builder)
	if err != nil {
		return nil, errors.Join(err, provider.Shutdown(ctx))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	listener, err := cfg.ServerConfig.ToListener(ctx)
	if err != nil {
		return nil, errors.Join(err, provider.Shutdown(ctx))
	}
	var extensions map[component.ID]component.Component
	if host != nil {
		extensions = host.GetExtensions()
	}
	server, err := cfg.ServerConfig.ToServer(ctx, extensions, set, mux)
	if err != nil {
		return nil, errors.Join(err, listener.Close(), provider.Shutdown(ctx))
	}
	e := &productEndpoint{endpoint: cfg.Endpoint(), refs: 1, builder: builder, sums: sums, provider: provider, server: server, served: make(chan struct{})}
	go func() {
		defer close(e.served)
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			set.Logger.Error("the product metrics endpoint stopped", zap.String("endpoint", e.endpoint), zap.Error(err))
			if host != nil {
				componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
			}
		}
	}()
	set.Logger.Info("product metrics served with exemplars (OpenMetrics)", zap.String("endpoint", e.endpoint), zap.String("path", "/metrics"))
	return e, nil
}

// release gives e back; the last user stops it.
func (e *productEndpoint) release(ctx context.Context) error {
	productEndpoints.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(productEndpoints.byAddr, e.endpoint)
	}
	productEndpoints.Unlock()
	if !last {
		return nil
	}
	err := e.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = e.server.Close() // a scrape still under way is cut short
	}
	<-e.served
	e.builder.Shutdown()
	return errors.Join(err, e.provider.Shutdown(ctx))
}
