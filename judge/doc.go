// Package judge is the engine that decides, through a Backend, whether
// retrieved chunks are relevant to a reference text. It owns the public types
// and what every backend gets alike: earliest-deadline scheduling of bounded
// requests, retries, the verdict cache and de-duplication, the budget, the
// health breaker, the latency estimate and a cascade's first stage. Backends
// are packages of their own (judge/openai, judge/builtin); this one imports
// neither a client library, nor net/http, nor the collector, so that it can
// be used and benchmarked outside one.
package judge
