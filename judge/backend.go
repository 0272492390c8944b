package judge

import "context"

// backend makes single attempts at judging: one HTTP request for an LLM,
// one in-process call for builtin:lexical. Retries, concurrency, budgets,
// deadlines and caching are the engine's, so that every backend gets them
// alike.
type backend interface {
	// id is the judge's "provider:model".
	id() string
	// batch is how many chunks one attempt decides together: 1 when each
	// chunk is judged on its own (an LLM in per_chunk mode), 0 when the
	// chunks of a retrieval are judged together and each verdict may depend
	// on the others (batched mode, builtin:lexical). It decides the unit of
	// work, of caching and of in-flight de-duplication.
	batch() int
	// inline reports whether an attempt is cheap and local enough to run in
	// the caller's goroutine (microseconds, no I/O, never fails).
	inline() bool
	// attempt decides the given chunks against the query and reference, or
	// fails with an *Error. Texts are already cut to max_chunk_chars.
	attempt(ctx context.Context, query, reference string, chunks []string) ([]Verdict, Usage, error)
	// close releases what the backend holds (idle connections).
	close()
}
