package judge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheKey is a SHA-256 over everything that can change a verdict: the judge
// (provider, model, endpoint), the prompt version, the mode, and the query,
// reference and chunk texts as the judge sees them (after truncation). In
// batched mode a verdict is given with the other chunks in view, so the key
// also covers the whole chunk set: a chunk that sways its neighbours' verdicts
// cannot pass that influence on to other retrievals through the cache.
// Hashing keeps entries small whatever the texts' size.
type cacheKey [sha256.Size]byte

type cacheEntry struct {
	verdict Verdict
	expires time.Time // zero: never
}

// inflight is one chunk verdict being decided; judgements that need the same
// verdict wait on done instead of asking again.
type inflight struct {
	done    chan struct{}
	verdict Verdict
	err     error
}

// errAskAgain tells a waiter that the request it waited for ended without
// deciding its chunk for reasons of its own (its deadline, or another chunk
// of its span failing first); the waiter asks itself.
var errAskAgain = errors.New("the shared request did not decide this chunk")

// cachedJudge answers repeated chunk judgements from an LRU cache and lets
// concurrent identical judgements share a single upstream request.
//
// It uses golang-lru's plain thread-safe LRU and keeps the expiry in each
// entry, instead of golang-lru's expirable LRU: that one starts a goroutine
// per cache that never exits (so every collector config reload would leak it
// along with the whole cache), and it reads the wall clock, which would make
// TTL tests slow and flaky.
type cachedJudge struct {
	inner *openAIJudge
	salt  []byte
	ttl   time.Duration
	clock Clock
	obs   Observer
	lru   *lru.Cache[cacheKey, cacheEntry] // nil: no cache, de-duplication only
	// batched keys verdicts on the whole chunk set (see cacheKey).
	batched bool

	mu       sync.Mutex
	inflight map[cacheKey]*inflight
}

func newCached(inner *openAIJudge, c Config, o options) *cachedJudge {
	cj := &cachedJudge{
		inner:    inner,
		salt:     []byte(inner.ID() + "\x00" + c.BaseURL + "\x00" + PromptVersion + "\x00" + string(c.Mode)),
		ttl:      c.CacheTTL,
		clock:    o.clock,
		obs:      o.observer,
		batched:  c.Mode == ModeBatched,
		inflight: make(map[cacheKey]*inflight),
	}
	if c.CacheSize > 0 {
		l, err := lru.New[cacheKey, cacheEntry](c.CacheSize)
		if err != nil {
			panic(err) // only for size <= 0
		}
		cj.lru = l
	}
	return cj
}

func (c *cachedJudge) ID() string { return c.inner.ID() }

// Close closes the inner judge.
func (c *cachedJudge) Close() error { return c.inner.Close() }

func (c *cachedJudge) key(query, reference, chunk string, set []byte) cacheKey {
	h := sha256.New()
	var n [8]byte
	for _, s := range [...][]byte{c.salt, []byte(query), []byte(reference), []byte(chunk), set} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write(s)
	}
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// chunkSet hashes the whole chunk list, for batched-mode keys.
func chunkSet(chunks []string) []byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range chunks {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return h.Sum(nil)
}

// Judge implements Judge: cached verdicts are served, verdicts another
// judgement is already deciding are awaited, and only the rest go upstream,
// in one inner judgement.
func (c *cachedJudge) Judge(ctx context.Context, req Request) (Result, error) {
	query, ref, chunks := truncateRequest(req, c.inner.maxChunkChars)
	var set []byte
	if c.batched {
		set = chunkSet(chunks)
	}
	keys := make([]cacheKey, len(chunks))
	for i, chunk := range chunks {
		keys[i] = c.key(query, ref, chunk, set)
	}

	verdicts := make([]Verdict, len(chunks))
	waits := make(map[int]*inflight) // chunk index -> request deciding it
	var (
		ownIdx   []int
		ownCalls []*inflight
		hits     int
	)
	now := c.clock.Now()
	c.mu.Lock()
	for i, k := range keys {
		if c.lru != nil {
			if e, ok := c.lru.Get(k); ok {
				if e.expires.IsZero() || now.Before(e.expires) {
					verdicts[i] = e.verdict
					hits++
					continue
				}
				c.lru.Remove(k)
			}
		}
		if f, ok := c.inflight[k]; ok {
			waits[i] = f // decided elsewhere, or earlier in this same request
			continue
		}
		f := &inflight{done: make(chan struct{})}
		c.inflight[k] = f
		ownIdx = append(ownIdx, i)
		ownCalls = append(ownCalls, f)
	}
	c.mu.Unlock()
	// A verdict another judgement is already requesting costs no request
	// either, so it counts as a hit: hits and misses then add up to the
	// requests saved and made, whatever the timing.
	hits += len(waits)
	c.obs.CacheLookups(hits, len(chunks)-hits)

	var usage Usage
	if len(ownIdx) > 0 {
		sub := make([]string, len(ownIdx))
		for j, i := range ownIdx {
			sub[j] = chunks[i]
		}
		out := c.inner.judgeChunks(ctx, query, ref, sub)
		usage = out.usage
		c.settle(keys, ownIdx, ownCalls, out)
		if err := out.err(); err != nil {
			return Result{Usage: usage}, err
		}
		for j, i := range ownIdx {
			verdicts[i] = out.verdicts[j]
		}
	}

	var again []int
	for i, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return Result{Usage: usage}, ctx.Err()
		}
		switch {
		case f.err == nil:
			verdicts[i] = f.verdict
		case errors.Is(f.err, errAskAgain):
			again = append(again, i)
		default:
			return Result{Usage: usage}, f.err
		}
	}
	if len(again) > 0 {
		sub := Request{Query: req.Query, Reference: req.Reference, Chunks: make([]string, len(again))}
		for j, i := range again {
			sub.Chunks[j] = req.Chunks[i]
		}
		res, err := c.Judge(ctx, sub)
		usage.Add(res.Usage)
		if err != nil {
			return Result{Usage: usage}, err
		}
		for j, i := range again {
			verdicts[i] = res.Verdicts[j]
		}
	}
	return Result{Verdicts: verdicts, Usage: usage}, nil
}

// settle stores the verdicts the inner judgement decided, even when others
// failed, and wakes whoever waits for them. A failure of the chunk itself
// (the judge's reply for it broke the contract, the endpoint refused it) is
// passed on to its waiters, who would meet it again; a chunk left undecided
// for the owner's own reasons (its deadline, its budget, another of its
// chunks failing) sends its waiters to ask themselves. Failures are not
// cached.
func (c *cachedJudge) settle(keys []cacheKey, idx []int, calls []*inflight, out outcome) {
	var expires time.Time
	if c.ttl > 0 {
		expires = c.clock.Now().Add(c.ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range idx {
		f := calls[j]
		switch err := out.errs[j]; {
		case err == nil:
			f.verdict = out.verdicts[j]
			if c.lru != nil {
				c.lru.Add(keys[i], cacheEntry{verdict: f.verdict, expires: expires})
			}
		case errors.Is(err, errNotDecided), errors.Is(err, ErrOverBudget),
			errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			f.err = errAskAgain
		default:
			f.err = err
		}
		delete(c.inflight, keys[i])
		close(f.done)
	}
}
