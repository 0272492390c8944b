package judge

import (
	"crypto/sha256"
	"encoding/binary"
	"time"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheKey is a SHA-256 over everything that can change a verdict: the judge
// (provider, model, endpoint), the prompt version, the mode, and the query,
// reference and chunk texts as the judge sees them (after truncation). A
// judge whose verdicts depend on the other chunks of the retrieval (batched
// mode, builtin:lexical) is keyed on the whole chunk set, so that a chunk
// that sways its neighbours cannot pass that influence on to other
// retrievals through the cache. Hashing keeps entries small whatever the
// texts' size.
type cacheKey [sha256.Size]byte

// keyer computes cache keys under a salt naming the judge.
type keyer struct{ salt []byte }

func (k keyer) key(query, reference string, chunks []string) cacheKey {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		// The text itself, not a copy: []byte(s) would copy every chunk
		// of every span just to hash it. The hash only reads it.
		h.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
	}
	h.Write(k.salt)
	write(query)
	write(reference)
	binary.LittleEndian.PutUint64(n[:], uint64(len(chunks)))
	h.Write(n[:])
	for _, c := range chunks {
		write(c)
	}
	var out cacheKey
	h.Sum(out[:0])
	return out
}

type cacheEntry struct {
	verdicts []Verdict
	expires  time.Time // zero: never
}

// verdictCache keeps verdicts given before, for any judge.
//
// It uses golang-lru's plain thread-safe LRU and keeps the expiry in each
// entry, instead of golang-lru's expirable LRU: that one starts a goroutine
// per cache that never exits (so every collector config reload would leak it
// along with the whole cache), and it reads the wall clock, which would make
// TTL tests slow and flaky.
type verdictCache struct {
	lru *lru.Cache[cacheKey, cacheEntry] // nil: no cache
	ttl time.Duration
}

func newVerdictCache(size int, ttl time.Duration) *verdictCache {
	c := &verdictCache{ttl: ttl}
	if size > 0 {
		l, err := lru.New[cacheKey, cacheEntry](size)
		if err != nil {
			panic(err) // only for size <= 0
		}
		c.lru = l
	}
	return c
}

func (c *verdictCache) get(k cacheKey, now time.Time) ([]Verdict, bool) {
	if c.lru == nil {
		return nil, false
	}
	e, ok := c.lru.Get(k)
	if !ok {
		return nil, false
	}
	if !e.expires.IsZero() && !now.Before(e.expires) {
		c.lru.Remove(k)
		return nil, false
	}
	return e.verdicts, true
}

func (c *verdictCache) put(k cacheKey, verdicts []Verdict, now time.Time) {
	if c.lru == nil {
		return
	}
	var expires time.Time
	if c.ttl > 0 {
		expires = now.Add(c.ttl)
	}
	c.lru.Add(k, cacheEntry{verdicts: verdicts, expires: expires})
}
