package ragprecisionprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

// NewFactory returns the factory of the ragprecision processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	return config.Default()
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c, ok := cfg.(*config.Config)
	if !ok {
		return nil, fmt.Errorf("ragprecision: unexpected config type %T", cfg)
	}
	return newProcessor(set.TelemetrySettings, c, next)
}
