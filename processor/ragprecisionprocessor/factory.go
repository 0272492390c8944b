package ragprecisionprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
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

// NewFactoryWithClock is NewFactory with the processor's time and its
// judge's (budget, backoff, adaptive sampling's intervals) taken from
// clock, so that a tool replays an hour of traffic in seconds
// (cmd/ragprecision-sampling-compare). Spans a judge holds must be
// released before the clock passes their max_wait.
func NewFactoryWithClock(clock judge.Clock) processor.Factory {
	create := func(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
		c, ok := cfg.(*config.Config)
		if !ok {
			return nil, fmt.Errorf("ragprecision: unexpected config type %T", cfg)
		}
		p, err := newProcessor(set.TelemetrySettings, c, next, judge.WithClock(clock))
		if err != nil {
			return nil, err
		}
		p.setClock(clock.Now)
		return p, nil
	}
	return processor.NewFactory(metadata.Type, createDefaultConfig, processor.WithTraces(create, metadata.TracesStability))
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
