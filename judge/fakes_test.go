package judge

import (
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

// fakeClock advances only when something waits on it or a test moves it:
// an AfterFunc moves it to when the call is due and makes the call at once,
// so that backoffs take no real time and are recorded.
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

type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	go f()
	return firedTimer{}
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
	reasons  map[Reason]int
	usage    Usage
	hits     int
	misses   int
	lookups  int
	health   []error
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{outcomes: map[Outcome]int{}, reasons: map[Reason]int{}}
}

func (o *recordingObserver) JudgeRequest(out Outcome, reason Reason, _ time.Duration, u Usage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes[out]++
	if reason != "" {
		o.reasons[reason]++
	}
	o.usage.Add(u)
}

func (o *recordingObserver) JudgeHealth(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.health = append(o.health, err)
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
	reasons               map[Reason]int
	health                []error
	usage                 Usage
	hits, misses, lookups int
}

func (o *recordingObserver) snapshot() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := observed{outcomes: map[Outcome]int{}, reasons: map[Reason]int{}, usage: o.usage, hits: o.hits, misses: o.misses, lookups: o.lookups,
		health: append([]error(nil), o.health...)}
	for k, v := range o.outcomes {
		cp.outcomes[k] = v
	}
	for k, v := range o.reasons {
		cp.reasons[k] = v
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

func mustNew(t *testing.T, c Config, opts ...Option) *Engine {
	t.Helper()
	j, err := New(c, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

func relevant(res Result) []bool {
	out := make([]bool, len(res.Verdicts))
	for i, v := range res.Verdicts {
		out[i] = v.Relevant
	}
	return out
}
