// Package judge is the engine that decides, through a backend, whether
// retrieved chunks are relevant to a reference text. It owns the public
// types (Request, Verdict, Result, Usage, Error, Reason, Outcome, Observer,
// Clock), the Backend interface, and what every backend gets alike:
// earliest-deadline scheduling of a bounded number of requests, retries with
// backoff, the verdict cache, de-duplication of requests in flight, the
// request budget, the health breaker, the latency estimate and a cascade's
// first stage.
//
// Backends are packages of their own: judge/openai for any OpenAI-compatible
// endpoint, judge/builtin for the offline builtin:lexical. This package
// imports neither a client library nor net/http, and nothing of the
// collector, so that it can be used and benchmarked outside one.
package judge
