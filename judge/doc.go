// Package judge is the engine that decides, through a Backend, whether
// retrieved chunks are relevant to a reference text: the public types, and
// what every backend gets alike (earliest-deadline scheduling of bounded
// requests, retries, the verdict cache and de-duplication, the budget, the
// health breaker, the latency estimate, a cascade's first stage). A
// judgement goes New/Judge (engine.go), Admit/Commit (ticket.go), the workers
// (worker.go), shared requests (flight.go). Backends are packages of their
// own (judge/openai, judge/builtin); this one imports no client library, no
// net/http and nothing of the collector.
package judge
