package ragprecisionprocessor

import (
	"context"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "ragprecision" {
		t.Fatalf("type %q", f.Type())
	}
	if f.TracesStability() != metadata.TracesStability {
		t.Fatalf("stability %v", f.TracesStability())
	}
	cfg := f.CreateDefaultConfig()
	if !reflect.DeepEqual(cfg, config.Default()) {
		t.Fatalf("default config %+v", cfg)
	}
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().MutatesData {
		t.Fatal("the processor annotates spans: MutatesData must be true")
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop()); err == nil {
		t.Fatal("metrics are not supported")
	}
}
