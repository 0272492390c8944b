// Package metadata holds the component's identity, as mdatagen would
// generate it for a component in the collector's repositories.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	// Type is the processor's type in collector configs: processors: ragprecision:.
	Type = component.MustNewType("ragprecision")
	// ScopeName is the instrumentation scope of the processor's telemetry.
	ScopeName = "github.com/ragprecision/ragprecision/processor/ragprecisionprocessor"
)

// TracesStability is the stability of the traces signal.
const TracesStability = component.StabilityLevelAlpha
