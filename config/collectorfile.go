package config

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
)

// processorType is the processor's component type: its section in a
// collector configuration is processors::ragprecision, or
// processors::ragprecision/NAME.
const processorType = "ragprecision"

// FromCollectorFile reads the configuration of a ragprecision processor out
// of a collector configuration file, as the collector reads it: ${env:NAME}
// and ${file:PATH} resolved, keys left out at their defaults, unknown keys
// refused. id is the processor's component ID (ragprecision or
// ragprecision/NAME); "" takes the file's only ragprecision processor. It
// returns the ID it read. The configuration is not validated: tools that
// read a recording's configuration elsewhere need its attributes and
// limits, not its API key or canary file, and call Validate when they do.
func FromCollectorFile(ctx context.Context, path, id string) (*Config, string, error) {
	res, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + path},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	if err != nil {
		return nil, "", err
	}
	conf, err := res.Resolve(ctx)
	_ = res.Shutdown(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	processors, err := conf.Sub("processors")
	if err != nil {
		return nil, "", fmt.Errorf("%s: processors: %w", path, err)
	}
	var ours []string
	for _, k := range processors.AllKeys() {
		name, _, _ := strings.Cut(k, confmap.KeyDelimiter)
		if (name == processorType || strings.HasPrefix(name, processorType+"/")) && !contains(ours, name) {
			ours = append(ours, name)
		}
	}
	for k := range processors.ToStringMap() {
		// A processor listed with no settings (ragprecision:) has no keys.
		if (k == processorType || strings.HasPrefix(k, processorType+"/")) && !contains(ours, k) {
			ours = append(ours, k)
		}
	}
	sort.Strings(ours)
	switch {
	case id == "" && len(ours) == 1:
		id = ours[0]
	case id == "" && len(ours) == 0:
		return nil, "", fmt.Errorf("%s: no ragprecision processor under processors:", path)
	case id == "":
		return nil, "", fmt.Errorf("%s: %d ragprecision processors (%s): name one", path, len(ours), strings.Join(ours, ", "))
	case !contains(ours, id):
		return nil, "", fmt.Errorf("%s: no processor %s under processors: (ragprecision processors: %s)", path, id, strings.Join(ours, ", "))
	}
	sub, err := processors.Sub(id)
	if err != nil {
		return nil, "", fmt.Errorf("%s: processors::%s: %w", path, id, err)
	}
	cfg := Default()
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, "", fmt.Errorf("%s: processors::%s: %w", path, id, err)
	}
	return cfg, id, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
