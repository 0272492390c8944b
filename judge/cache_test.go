package judge_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
	"github.com/ragprecision/ragprecision/judge/openai"
)

func cachedConfig(url string) judgetest.LLM {
	c := judgetest.NewLLM(url)
	c.CacheSize = 100
	c.CacheTTL = time.Hour
	return c
}

func TestCacheServesRepeats(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	obs := judgetest.NewRecordingObserver()
	j := cachedConfig(srv.URL).New(t, judge.WithObserver(obs))
	req := judge.Request{Query: "q", Reference: "r", Chunks: []string{"x1", "y", "x2"}}
	first, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := j.Judge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(judgetest.Relevant(first), judgetest.Relevant(second)) || !reflect.DeepEqual(judgetest.Relevant(first), []bool{true, false, true}) {
		t.Fatalf("%v / %v", judgetest.Relevant(first), judgetest.Relevant(second))
	}
	if srv.Calls() != 3 {
		t.Fatalf("%d upstream calls, want 3", srv.Calls())
	}
	if second.Usage != (judge.Usage{}) {
		t.Errorf("cached verdicts cost nothing: %+v", second.Usage)
	}
	if s := obs.Snapshot(); s.Hits != 3 || s.Misses != 3 {
		t.Errorf("hits=%d misses=%d, want 3/3", s.Hits, s.Misses)
	}
	// A partly cached span sends only the new chunk.
	if _, err := j.Judge(context.Background(), judge.Request{Query: "q", Reference: "r", Chunks: []string{"x1", "new x"}}); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 4 {
		t.Fatalf("%d upstream calls, want 4", srv.Calls())
	}
}

func TestCacheKeySeparatesInputs(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	j := cachedConfig(srv.URL).New(t)
	for _, req := range []judge.Request{
		{Query: "q", Reference: "r", Chunks: []string{"x"}},
		{Query: "q", Reference: "other reference", Chunks: []string{"x"}},
		{Query: "other question", Reference: "r", Chunks: []string{"x"}},
		// Length-prefixed fields: moving text between fields is a new key.
		{Query: "q", Reference: "", Chunks: []string{"rx"}},
		{Query: "", Reference: "qr", Chunks: []string{"x"}},
	} {
		if _, err := j.Judge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Calls() != 5 {
		t.Fatalf("%d upstream calls, want 5 distinct keys", srv.Calls())
	}
	// A different judge or mode does not share verdicts.
	a, b := cachedConfig(srv.URL), cachedConfig(srv.URL)
	b.Mode = openai.ModeBatched
	ja, jb := a.New(t), b.New(t)
	x := []string{"x"}
	if judge.CacheKey(ja, "q", "r", x) == judge.CacheKey(jb, "q", "r", x) {
		t.Fatal("mode is not part of the key")
	}
	b = cachedConfig(srv.URL)
	b.Model = "other"
	if jc := b.New(t); judge.CacheKey(ja, "q", "r", x) == judge.CacheKey(jc, "q", "r", x) {
		t.Fatal("model is not part of the key")
	}
}

func TestCacheTTLExpiry(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	clock := judgetest.NewFakeClock()
	c := cachedConfig(srv.URL)
	c.CacheTTL = time.Minute
	j := c.New(t, judge.WithClock(clock))
	req := judge.Request{Reference: "r", Chunks: []string{"x"}}
	for _, step := range []struct {
		advance time.Duration
		calls   int64
	}{{0, 1}, {59 * time.Second, 1}, {time.Second, 2}, {30 * time.Second, 2}} {
		clock.Advance(step.advance)
		if _, err := j.Judge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := srv.Calls(); got != step.calls {
			t.Fatalf("after +%s: %d upstream calls, want %d", step.advance, got, step.calls)
		}
	}
}

func TestCacheEvictsAtSize(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := cachedConfig(srv.URL)
	c.CacheSize = 2
	j := c.New(t)
	judge := func(chunk string) {
		t.Helper()
		if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{chunk}}); err != nil {
			t.Fatal(err)
		}
	}
	judge("a")
	judge("b")
	judge("a") // hit; b is now least recently used
	judge("c") // evicts b
	if srv.Calls() != 3 {
		t.Fatalf("%d calls", srv.Calls())
	}
	judge("a") // still cached
	if srv.Calls() != 3 {
		t.Fatalf("a was evicted: %d calls", srv.Calls())
	}
	judge("b") // evicted: asked again
	if srv.Calls() != 4 {
		t.Fatalf("b was not evicted: %d calls", srv.Calls())
	}
}

func TestCacheDeduplicatesConcurrentRequests(t *testing.T) {
	release := make(chan struct{})
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		<-release
		return chattest.KeywordJudge("x")(n, r)
	})
	obs := judgetest.NewRecordingObserver()
	j := cachedConfig(srv.URL).New(t, judge.WithObserver(obs))
	const n = 100
	var wg sync.WaitGroup
	results := make([]judge.Result, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
		})
	}
	// Every judgement has looked the chunk up (and is now waiting) before the
	// single upstream request is allowed to finish.
	deadline := time.Now().Add(10 * time.Second)
	for obs.Snapshot().Lookups < n {
		if time.Now().After(deadline) {
			t.Fatal("judgements did not start")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || len(results[i].Verdicts) != 1 || !results[i].Verdicts[0].Relevant {
			t.Fatalf("judgement %d: %+v %v", i, results[i], errs[i])
		}
	}
	if got := srv.Calls(); got != 1 {
		t.Fatalf("%d upstream calls for %d identical concurrent judgements, want 1", got, n)
	}
	if s := obs.Snapshot(); s.Hits != n-1 || s.Misses != 1 {
		t.Fatalf("hits=%d misses=%d, want %d/1", s.Hits, s.Misses, n-1)
	}
}

// Duplicate chunks within one span are asked once.
func TestCacheDeduplicatesWithinRequest(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	obs := judgetest.NewRecordingObserver()
	j := cachedConfig(srv.URL).New(t, judge.WithObserver(obs))
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x", "y", "x", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(judgetest.Relevant(res), []bool{true, false, true, true}) {
		t.Fatalf("%v", judgetest.Relevant(res))
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d calls", srv.Calls())
	}
	if s := obs.Snapshot(); s.Hits != 2 || s.Misses != 2 {
		t.Fatalf("hits=%d misses=%d, want 2/2: duplicates cost no request", s.Hits, s.Misses)
	}
}

// Failures are not cached.
func TestCacheDoesNotKeepFailures(t *testing.T) {
	fail := true
	var mu sync.Mutex
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return chattest.Reply{Status: 400}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	j := cachedConfig(srv.URL).New(t)
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err == nil {
		t.Fatal("want error")
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
	if err != nil || !res.Verdicts[0].Relevant {
		t.Fatalf("%+v %v", res, err)
	}
}

// A waiter whose leader ran out of time asks itself instead of inheriting
// the leader's deadline.
func TestCacheWaiterOutlivesLeader(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		if n == 1 {
			<-release // the leader's request hangs until the leader has ended
			return chattest.Reply{Status: 500}
		}
		return chattest.KeywordJudge("x")(n, r)
	})
	defer unblock()
	obs := judgetest.NewRecordingObserver()
	j := cachedConfig(srv.URL).New(t, judge.WithObserver(obs))
	leaderCtx, cancel := context.WithCancel(context.Background())
	leaderDone := make(chan error)
	go func() {
		_, err := j.Judge(leaderCtx, judge.Request{Reference: "r", Chunks: []string{"x"}})
		leaderDone <- err
	}()
	for srv.Calls() < 1 {
		time.Sleep(time.Millisecond)
	}
	waiterDone := make(chan judge.Result)
	go func() {
		res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}})
		if err != nil {
			t.Error(err)
		}
		waiterDone <- res
	}()
	for obs.Snapshot().Lookups < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	// The shared request fails only now (not after the backend's timeout, 5 s): the
	// waiter must ask again itself.
	unblock()
	if res := <-waiterDone; len(res.Verdicts) != 1 || !res.Verdicts[0].Relevant {
		t.Fatalf("waiter: %+v", res)
	}
}

// A span whose judgement fails does not fail the spans that waited for one
// of its chunks: a request it made is still answered to them, and what it
// did decide is kept. The order of events is forced, not timed: the shared
// chunk's reply is held until the owner has failed.
func TestOwnerFailureDoesNotSpreadToWaiters(t *testing.T) {
	releaseShared := make(chan struct{})
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		switch r.Block("CHUNK") {
		case "poison":
			return chattest.Reply{Content: "Sure! yes"}
		case "shared":
			<-releaseShared
		}
		return chattest.Reply{Content: `{"verdict":"yes","reason":"r"}`}
	})
	c := cachedConfig(srv.URL)
	c.MaxRetries = 0
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithObserver(obs))
	ownerDone := make(chan error, 1)
	go func() {
		_, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"decided", "shared", "poison"}})
		ownerDone <- err
	}()
	// The owner fails on "poison" while its "shared" request is held.
	if err := <-ownerDone; judge.ReasonOf(err) != judge.ReasonBadReply {
		close(releaseShared)
		t.Fatalf("owner: %v", err)
	}
	waiterDone := make(chan judge.Result, 1)
	go func() {
		res, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"shared", "decided"}})
		if err != nil {
			t.Errorf("the waiter inherited the owner's failure: %v", err)
		}
		waiterDone <- res
	}()
	for obs.Snapshot().Lookups < 2 {
		time.Sleep(time.Millisecond)
	}
	close(releaseShared)
	res := <-waiterDone
	if len(res.Verdicts) != 2 || !res.Verdicts[0].Relevant || !res.Verdicts[1].Relevant {
		t.Fatalf("%+v", res)
	}
	// "shared" was asked once, by the owner; "decided" was answered before
	// the owner failed: cached, not asked again.
	asked := map[string]int{}
	for _, r := range srv.Requests() {
		asked[r.Block("CHUNK")]++
	}
	if asked["decided"] != 1 || asked["shared"] != 1 {
		t.Fatalf("requests per chunk %v", asked)
	}
}

// In batched mode a verdict is given with the other chunks in view, so it is
// shared only with the same chunk set.
func TestBatchedVerdictsAreKeyedOnTheChunkSet(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	c := cachedConfig(srv.URL)
	c.Mode = openai.ModeBatched
	j := c.New(t)
	for _, chunks := range [][]string{{"x1", "y"}, {"x1", "z"}, {"x1", "y"}} {
		if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Calls() != 2 {
		t.Fatalf("%d calls, want 2: only the identical set is served from the cache", srv.Calls())
	}
}

// Without a cache, identical requests in flight are still made once.
func TestDeduplicationWithoutCache(t *testing.T) {
	release := make(chan struct{})
	srv := judgetest.NewChatServer(t, func(n int, r chattest.Request) chattest.Reply {
		<-release
		return chattest.KeywordJudge("x")(n, r)
	})
	c := cachedConfig(srv.URL)
	c.CacheSize = 0
	obs := judgetest.NewRecordingObserver()
	j := c.New(t, judge.WithObserver(obs))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
				t.Error(err)
			}
		})
	}
	for obs.Snapshot().Lookups < 10 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if srv.Calls() != 1 {
		t.Fatalf("%d calls", srv.Calls())
	}
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil || srv.Calls() != 2 {
		t.Fatalf("with no cache nothing is kept: %d calls, %v", srv.Calls(), err)
	}
}

// CacheLookups is called as chunks are looked up, and only then: the tests
// that let a shared request finish once every judgement has looked its
// chunk up rely on it, and an empty lookup reported early would let them
// release the request before the chunk was attached to it.
func TestCacheLookupsReportOnlyChunksLookedUp(t *testing.T) {
	srv := judgetest.NewChatServer(t, chattest.KeywordJudge("x"))
	obs := judgetest.NewRecordingObserver()
	j := cachedConfig(srv.URL).New(t, judge.WithObserver(obs))
	if _, err := j.Judge(context.Background(), judge.Request{Reference: "r", Chunks: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	_ = j.Close() // every observer call made
	if s := obs.Snapshot(); s.Lookups != 1 || s.Hits != 0 || s.Misses != 1 {
		t.Fatalf("%d lookups (hits %d, misses %d), want one: the chunk's miss", s.Lookups, s.Hits, s.Misses)
	}
}
