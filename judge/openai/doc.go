// Package openai is the judge backend for any OpenAI-compatible Chat
// Completions endpoint, through github.com/sashabaranov/go-openai: the
// providers' endpoints and what they honour (providers.go), the prompts and
// the wire contract of the replies (prompt.go, parse.go), the transport under
// the client (transport.go), the classification of failures into the
// engine's reasons (classify.go) and the scrubbing of secrets and span
// content from what providers say (scrub.go). The engine in package judge
// schedules, retries and caches its attempts.
package openai
