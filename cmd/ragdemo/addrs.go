package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The addresses of examples/demo.yaml when no RAGDEMO_* variable is set:
// where a collector started by hand with that config listens.
const (
	defaultOTLP     = "localhost:4317"
	defaultOTLPHTTP = "localhost:4318"
	defaultSink     = "localhost:4319"
	defaultHealth   = "localhost:13133"
	defaultMetrics  = "localhost:8888"
	defaultZPages   = "localhost:55679"
)

// addrs are the addresses the demo and its collector use. examples/demo.yaml
// reads every one of them from a RAGDEMO_* variable, which is how the demo
// moves a collector it starts.
type addrs struct {
	otlp, otlpHTTP, health, metrics, zpages string // the collector listens
	sink                                    string // the demo listens; the collector's exporter sends here
}

// collectorEnv is what the collector needs in its environment to listen
// and send where a says.
func (a addrs) collectorEnv() ([]string, error) {
	host, port, err := net.SplitHostPort(a.metrics)
	if err != nil {
		return nil, fmt.Errorf("metrics address %q: %w", a.metrics, err)
	}
	return []string{
		"RAGDEMO_OTLP_GRPC=" + a.otlp,
		"RAGDEMO_OTLP_HTTP=" + a.otlpHTTP,
		"RAGDEMO_SINK=" + a.sink,
		"RAGDEMO_HEALTH=" + a.health,
		"RAGDEMO_METRICS_HOST=" + host,
		"RAGDEMO_METRICS_PORT=" + port,
		"RAGDEMO_ZPAGES=" + a.zpages,
	}, nil
}

// listener is one address the collector will listen on, with what it is
// for and how a user moves it.
type listener struct {
	addr, what, override string
}

func (a addrs) listeners() []listener {
	return []listener{
		{a.otlp, "OTLP/gRPC receiver", "-otlp HOST:PORT"},
		{a.otlpHTTP, "OTLP/HTTP receiver", "RAGDEMO_OTLP_HTTP=HOST:PORT"},
		{a.health, "health_check extension", "-health HOST:PORT"},
		{a.metrics, "Prometheus metrics endpoint", "-metrics HOST:PORT"},
		{a.zpages, "zpages extension", "RAGDEMO_ZPAGES=HOST:PORT"},
	}
}

// resolveAddrs fills in the addresses o leaves empty: from the RAGDEMO_*
// variable examples/demo.yaml reads, else, for a collector the demo starts,
// a free port, so that the demo never meets another process on a
// well-known port; else, for a collector already running, the config's
// default.
func resolveAddrs(o options, getenv func(string) string) (addrs, error) {
	start := o.collector != ""
	var free []net.Listener // held until every port is picked, so none repeats
	defer func() {
		for _, l := range free {
			l.Close()
		}
	}()
	pick := func(flagValue, env, def string) (string, error) {
		if flagValue != "" {
			return flagValue, nil
		}
		if v := getenv(env); v != "" {
			return v, nil
		}
		if !start {
			return def, nil
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("finding a free port: %w", err)
		}
		free = append(free, l)
		return l.Addr().String(), nil
	}
	var a addrs
	var errs []error
	for _, f := range []struct {
		dst            *string
		flag, env, def string
	}{
		{&a.otlp, o.otlp, "RAGDEMO_OTLP_GRPC", defaultOTLP},
		{&a.otlpHTTP, "", "RAGDEMO_OTLP_HTTP", defaultOTLPHTTP},
		{&a.health, o.health, "RAGDEMO_HEALTH", defaultHealth},
		{&a.zpages, "", "RAGDEMO_ZPAGES", defaultZPages},
	} {
		v, err := pick(f.flag, f.env, f.def)
		errs = append(errs, err)
		*f.dst = v
	}
	metrics, err := metricsAddr(o.metrics)
	errs = append(errs, err)
	if metrics == "" {
		if host, port := getenv("RAGDEMO_METRICS_HOST"), getenv("RAGDEMO_METRICS_PORT"); host != "" || port != "" {
			metrics = net.JoinHostPort(orDefault(host, "localhost"), orDefault(port, "8888"))
		}
	}
	a.metrics, err = pick(metrics, "", defaultMetrics)
	errs = append(errs, err)

	// The sink is the demo's own listener: with a collector it starts, any
	// free port will do (otlpsink binds it and reports which).
	a.sink = o.sink
	if a.sink == "" {
		a.sink = getenv("RAGDEMO_SINK")
	}
	if a.sink == "" {
		a.sink = defaultSink
		if start {
			a.sink = "127.0.0.1:0"
		}
	}
	return a, errors.Join(errs...)
}

// metricsAddr accepts -metrics as host:port or as the endpoint's URL
// (http://localhost:8888/metrics), and returns host:port.
func metricsAddr(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("-metrics %q: want host:port or http://host:port/metrics", s)
		}
		s = u.Host
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("-metrics %q: want host:port or http://host:port/metrics", s)
	}
	if _, err := strconv.Atoi(port); err != nil {
		return "", fmt.Errorf("-metrics %q: the port must be a number", s)
	}
	return net.JoinHostPort(host, port), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkFree fails when any address the collector is about to listen on is
// taken. A collector that cannot bind exits, but not before the demo may
// have found the other process answering on the health port and taken it
// for its own; checking first turns that into a clear error.
func checkFree(ls []listener) error {
	seen := map[string]string{}
	var errs []error
	for _, l := range ls {
		if other, dup := seen[l.addr]; dup {
			errs = append(errs, fmt.Errorf("%s is given both to the %s and to the %s; move one with %s", l.addr, other, l.what, l.override))
			continue
		}
		seen[l.addr] = l.what
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s, for the collector's %s, is taken (%v): another process listens there, perhaps a collector you started yourself. Stop it, or move the demo's collector with %s",
				l.addr, l.what, err, l.override))
			continue
		}
		ln.Close()
	}
	return errors.Join(errs...)
}
