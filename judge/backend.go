package judge

import "context"

// Backend makes single attempts at judging: one HTTP request for an LLM,
// one in-process call for builtin:lexical. Retries, concurrency, budgets,
// deadlines and caching are the engine's, so that every backend gets them
// alike. A new provider is a package implementing Backend.
type Backend interface {
	// ID is the judge's "provider:model", recorded on scored spans.
	ID() string
	// PerChunk reports whether each chunk is judged on its own (an LLM
	// asked one chunk per request); false when the chunks of a retrieval
	// are judged together and each verdict may depend on the others (an
	// LLM asked for all of them at once, builtin:lexical). It decides the
	// unit of work, of caching and of in-flight de-duplication.
	PerChunk() bool
	// Inline reports whether an attempt is cheap and local enough to run in
	// the caller's goroutine (microseconds, no I/O, never fails). Inline
	// backends get no verdict cache and no request budget.
	Inline() bool
	// CacheSalt is everything besides the texts that decides this
	// backend's verdicts (model, endpoint, prompt version, criteria…): it
	// is part of every cache key, so that verdicts given under other
	// settings are never served.
	CacheSalt() string
	// Attempt decides the given chunks against the query and reference, or
	// fails with an *Error (see NewError), or with Cancelled when ctx ended
	// it. Texts are already cut to the engine's MaxChunkChars.
	Attempt(ctx context.Context, query, reference string, chunks []string) ([]Verdict, Usage, error)
	// Close releases what the backend holds (idle connections).
	Close()
}
