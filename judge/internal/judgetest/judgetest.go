// Package judgetest holds what the tests of the judge packages share: fake
// clocks, an observer that records, a local Chat Completions server, and an
// OpenAI-compatible judge on the engine built as the processor builds one.
// The engine's own white-box tests, inside package judge, cannot import it.
package judgetest

import (
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/builtin"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// NewChatServer starts a local Chat Completions server that answers with h,
// closed when the test ends.
func NewChatServer(t testing.TB, h chattest.Handler) *chattest.Server {
	t.Helper()
	s := chattest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// LLM is an OpenAI-compatible judge on the engine: the backend's options
// and the engine's settings, side by side.
type LLM struct {
	openai.Options
	judge.Settings
}

// NewLLM is a valid OpenAI-compatible judge aimed at url: openai:gpt-test,
// one request per chunk, 4 requests in flight, 3 retries, no cache.
func NewLLM(url string) LLM {
	return LLM{
		Options: openai.Options{
			Provider:       openai.ProviderOpenAI,
			Model:          "gpt-test",
			BaseURL:        url,
			APIKey:         "sk-test",
			Mode:           openai.ModePerChunk,
			ResponseFormat: openai.FormatAuto,
			Timeout:        5 * time.Second,
		},
		Settings: judge.Settings{MaxConcurrency: 4, MaxRetries: 3, MaxChunkChars: 4000},
	}
}

// WithCascade makes c a cascade whose first stage, builtin:lexical, decides
// the verdicts at least min sure (only the negatives, with criteria), as
// the processor builds one.
func (c LLM) WithCascade(min float64) LLM {
	c.Cascade = &judge.Cascade{First: builtin.NewLexical(c.MaxChunkChars), MinConfidence: min, OnlyNegatives: c.Criteria != ""}
	return c
}

// New builds the judge, closed when the test ends.
func (c LLM) New(t testing.TB, opts ...judge.Option) *judge.Engine {
	t.Helper()
	be, err := openai.New(c.Options)
	if err != nil {
		t.Fatalf("openai.New: %v", err)
	}
	return New(t, be, c.Settings, opts...)
}

// New runs be on the engine, closed when the test ends.
func New(t testing.TB, be judge.Backend, s judge.Settings, opts ...judge.Option) *judge.Engine {
	t.Helper()
	e, err := judge.New(be, s, opts...)
	if err != nil {
		t.Fatalf("judge.New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Relevant is the verdicts of res, as booleans.
func Relevant(res judge.Result) []bool {
	out := make([]bool, len(res.Verdicts))
	for i, v := range res.Verdicts {
		out[i] = v.Relevant
	}
	return out
}

// FakeClock advances only when something waits on it or a test moves it:
// an AfterFunc moves it to when the call is due and makes the call at once,
// so that backoffs take no real time and are recorded.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFakeClock starts at a fixed time.
func NewFakeClock() *FakeClock {
	return &FakeClock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

// Now is the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

// AfterFunc records d, moves the clock by it and calls f.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) judge.Timer {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	go f()
	return firedTimer{}
}

// Advance moves the clock by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Slept is every wait asked of the clock, in order.
func (c *FakeClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// ManualClock moves only when the test moves it; timers fire then.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

// NewManualClock starts at a fixed time.
func NewManualClock() *ManualClock {
	return &ManualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

type manualTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (t *manualTimer) Stop() bool {
	was := !t.stopped
	t.stopped = true
	return was
}

// Now is the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f when Advance reaches d from now.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) judge.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock by d and fires the timers due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		if !t.stopped {
			t.f()
		}
	}
}

// RecordingObserver counts what the judge reports.
type RecordingObserver struct {
	mu       sync.Mutex
	outcomes map[judge.Outcome]int
	reasons  map[judge.Reason]int
	purposes map[judge.Purpose]int
	usage    judge.Usage
	hits     int
	misses   int
	lookups  int
	health   []error
}

// NewRecordingObserver has recorded nothing.
func NewRecordingObserver() *RecordingObserver {
	return &RecordingObserver{outcomes: map[judge.Outcome]int{}, reasons: map[judge.Reason]int{}, purposes: map[judge.Purpose]int{}}
}

// JudgeRequest counts the request's purpose, outcome, reason and tokens.
func (o *RecordingObserver) JudgeRequest(purpose judge.Purpose, out judge.Outcome, reason judge.Reason, _ time.Duration, u judge.Usage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.purposes[purpose]++
	o.outcomes[out]++
	if reason != "" {
		o.reasons[reason]++
	}
	o.usage.Add(u)
}

// Purposes returns the requests counted by purpose.
func (o *RecordingObserver) Purposes() map[judge.Purpose]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.purposes)
}

// JudgeHealth records the change.
func (o *RecordingObserver) JudgeHealth(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.health = append(o.health, err)
}

// CacheLookups counts the lookups.
func (o *RecordingObserver) CacheLookups(hits, misses int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hits += hits
	o.misses += misses
	o.lookups++
}

// Observed is what a RecordingObserver has recorded so far.
type Observed struct {
	Outcomes              map[judge.Outcome]int
	Reasons               map[judge.Reason]int
	Health                []error
	Usage                 judge.Usage
	Hits, Misses, Lookups int
}

// Snapshot copies what has been recorded.
func (o *RecordingObserver) Snapshot() Observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Observed{Outcomes: maps.Clone(o.outcomes), Reasons: maps.Clone(o.reasons), Usage: o.usage,
		Hits: o.hits, Misses: o.misses, Lookups: o.lookups, Health: append([]error(nil), o.health...)}
}
