package judge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheKey is a SHA-256 over everything that can change a verdict: the judge
// (provider, model, endpoint), the prompt version, the mode, and the query,
// reference and chunk texts as the judge sees them (after truncation).
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

// cachedJudge answers repeated chunk judgements from an LRU cache and lets
// concurrent identical judgements share a single upstream request.
//
// It uses golang-lru's plain thread-safe LRU and keeps the expiry in each
// entry, instead of golang-lru's expirable LRU: that one starts a goroutine
// per cache that never exits (so every collector config reload would leak it
// along with the whole cache), and it reads the wall clock, which would make
// TTL tests slow and flaky.
type cachedJudge struct {
	inner Judge
	salt  []byte
	ttl   time.Duration
	clock Clock
	obs   Observer
	lru   *lru.Cache[cacheKey, cacheEntry]
	// maxChars is the truncation the inner judge applies; keys are computed
	// on the truncated text so that chunks differing only past the cut share
	// a verdict, as they share a prompt.
	maxChars int

	mu       sync.Mutex
	inflight map[cacheKey]*inflight
}

func newCached(inner *openAIJudge, c Config, o options) *cachedJudge {
	l, err := lru.New[cacheKey, cacheEntry](c.CacheSize)
	if err != nil {
		panic(err) // only for size <= 0, which New rules out
	}
	salt := []byte(inner.ID() + "\x00" + c.BaseURL + "\x00" + PromptVersion + "\x00" + string(c.Mode))
	return &cachedJudge{
		inner:    inner,
		salt:     salt,
		ttl:      c.CacheTTL,
		clock:    o.clock,
		obs:      o.observer,
		lru:      l,
		maxChars: c.MaxChunkChars,
		inflight: make(map[cacheKey]*inflight),
	}
}

func (c *cachedJudge) ID() string { return c.inner.ID() }

// Close closes the inner judge.
func (c *cachedJudge) Close() error {
	if cl, ok := c.inner.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

func (c *cachedJudge) key(query, reference, chunk string) cacheKey {
	h := sha256.New()
	var n [8]byte
	for _, s := range [...]string{string(c.salt), query, reference, chunk} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// Judge implements Judge: cached verdicts are served, verdicts another
// judgement is already deciding are awaited, and only the rest go upstream,
// in one inner judgement.
func (c *cachedJudge) Judge(ctx context.Context, req Request) (Result, error) {
	query := truncateRunes(req.Query, c.maxChars)
	ref := truncateRunes(req.Reference, c.maxChars)
	keys := make([]cacheKey, len(req.Chunks))
	for i, chunk := range req.Chunks {
		keys[i] = c.key(query, ref, truncateRunes(chunk, c.maxChars))
	}

	verdicts := make([]Verdict, len(req.Chunks))
	waits := make(map[int]*inflight) // chunk index -> call deciding it
	var (
		ownIdx   []int
		ownCalls []*inflight
		hits     int
	)
	now := c.clock.Now()
	c.mu.Lock()
	for i, k := range keys {
		if e, ok := c.lru.Get(k); ok {
			if e.expires.IsZero() || now.Before(e.expires) {
				verdicts[i] = e.verdict
				hits++
				continue
			}
			c.lru.Remove(k)
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
	// A verdict another judgement is already deciding costs no request
	// either, so it counts as a hit: hits and misses then add up to the
	// judge calls saved and made, whatever the timing.
	hits += len(waits)
	c.obs.CacheLookups(hits, len(req.Chunks)-hits)

	var res Result
	if len(ownIdx) > 0 {
		sub := Request{Query: req.Query, Reference: req.Reference, Chunks: make([]string, len(ownIdx))}
		for j, i := range ownIdx {
			sub.Chunks[j] = req.Chunks[i]
		}
		var err error
		res, err = c.inner.Judge(ctx, sub)
		c.settle(keys, ownIdx, ownCalls, res.Verdicts, err)
		if err != nil {
			return Result{Usage: res.Usage}, err
		}
		for j, i := range ownIdx {
			verdicts[i] = res.Verdicts[j]
		}
	}

	var retry []int
	for i, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return Result{Usage: res.Usage}, ctx.Err()
		}
		switch {
		case f.err == nil:
			verdicts[i] = f.verdict
		case errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded):
			// The judgement we waited for ran out of its own time; ours may
			// still have some, so ask for this chunk ourselves.
			retry = append(retry, i)
		default:
			return Result{Usage: res.Usage}, f.err
		}
	}
	if len(retry) > 0 {
		sub := Request{Query: req.Query, Reference: req.Reference, Chunks: make([]string, len(retry))}
		for j, i := range retry {
			sub.Chunks[j] = req.Chunks[i]
		}
		again, err := c.Judge(ctx, sub)
		res.Usage.Add(again.Usage)
		if err != nil {
			return Result{Usage: res.Usage}, err
		}
		for j, i := range retry {
			verdicts[i] = again.Verdicts[j]
		}
	}
	return Result{Verdicts: verdicts, Usage: res.Usage}, nil
}

// settle stores the verdicts this judgement decided and wakes whoever waits
// for them. Failures are not cached: the next judgement tries again.
func (c *cachedJudge) settle(keys []cacheKey, idx []int, calls []*inflight, verdicts []Verdict, err error) {
	var expires time.Time
	if c.ttl > 0 {
		expires = c.clock.Now().Add(c.ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range idx {
		f := calls[j]
		if err != nil {
			f.err = err
		} else {
			f.verdict = verdicts[j]
			c.lru.Add(keys[i], cacheEntry{verdict: f.verdict, expires: expires})
		}
		delete(c.inflight, keys[i])
		close(f.done)
	}
}
