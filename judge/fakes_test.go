package judge

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
)

func newChatServer(t *testing.T, h chattest.Handler) *chattest.Server {
	t.Helper()
	s := chattest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// fakeClock advances only when something sleeps on it or a test moves it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// recordingObserver counts what the judge reports.
type recordingObserver struct {
	mu       sync.Mutex
	outcomes map[Outcome]int
	usage    Usage
	hits     int
	misses   int
	lookups  int
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{outcomes: map[Outcome]int{}}
}

func (o *recordingObserver) JudgeRequest(out Outcome, _ time.Duration, u Usage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes[out]++
	o.usage.Add(u)
}

func (o *recordingObserver) CacheLookups(hits, misses int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hits += hits
	o.misses += misses
	o.lookups++
}

type observed struct {
	outcomes              map[Outcome]int
	usage                 Usage
	hits, misses, lookups int
}

func (o *recordingObserver) snapshot() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := observed{outcomes: map[Outcome]int{}, usage: o.usage, hits: o.hits, misses: o.misses, lookups: o.lookups}
	for k, v := range o.outcomes {
		cp.outcomes[k] = v
	}
	return cp
}

// testConfig is a valid OpenAI-compatible judge config aimed at url.
func testConfig(url string) Config {
	return Config{
		Model:          "openai:gpt-test",
		BaseURL:        url,
		APIKey:         "sk-test",
		Mode:           ModePerChunk,
		ResponseFormat: FormatAuto,
		Timeout:        5 * time.Second,
		MaxConcurrency: 4,
		MaxRetries:     3,
		MaxChunkChars:  4000,
	}
}

func mustNew(t *testing.T, c Config, opts ...Option) Judge {
	t.Helper()
	j, err := New(c, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if cl, ok := j.(io.Closer); ok {
		t.Cleanup(func() { _ = cl.Close() })
	}
	return j
}

func relevant(res Result) []bool {
	out := make([]bool, len(res.Verdicts))
	for i, v := range res.Verdicts {
		out[i] = v.Relevant
	}
	return out
}
