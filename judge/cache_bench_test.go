package judge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// BenchmarkCacheHit measures a judgement answered entirely from an LLM
// judge's verdict cache, through Engine.Judge as the processor calls it,
// against a baseline measured first in the same run: a bare map lookup per
// chunk, the least any cache could cost ("x-map-lookup" is the ratio). A
// request to the judge during the timed loop fails it: that is no hit.
//
//	go test -run '^$' -bench CacheHit -benchmem ./judge/
func BenchmarkCacheHit(b *testing.B) {
	for _, chunks := range []int{1, 5} {
		req := cachedRequest(chunks)
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			var baseline float64 // ns per judgement
			b.Run("map-lookup", func(b *testing.B) {
				m := map[string][]judge.Verdict{}
				for _, c := range req.Chunks {
					m[c] = []judge.Verdict{{Relevant: true}}
				}
				b.ReportAllocs()
				hits := 0
				for b.Loop() {
					for _, c := range req.Chunks {
						if _, ok := m[c]; ok {
							hits++
						}
					}
				}
				if hits != b.N*chunks {
					b.Fatal("a lookup missed")
				}
				baseline = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			})
			for _, provider := range []string{openai.ProviderOpenAI} {
				b.Run(provider, func(b *testing.B) {
					srv := chattest.NewServer(chattest.KeywordJudge("harbour"))
					defer srv.Close()
					c := judgetest.NewLLM(srv.URL)
					c.Provider, c.Model, c.APIKey, c.Timeout = provider, "bench-judge", "", 10*time.Second
					c.MaxConcurrency, c.MaxRetries, c.CacheSize, c.CacheTTL = 8, 0, 1000, time.Hour
					e := c.New(b)
					ctx := context.Background()
					first, err := e.Judge(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					calls := srv.Calls()
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						res, err := e.Judge(ctx, req)
						if err != nil || len(res.Verdicts) != chunks || res.Verdicts[0] != first.Verdicts[0] {
							b.Fatalf("%v, %v", res, err)
						}
					}
					b.StopTimer()
					if srv.Calls() != calls {
						b.Fatalf("%d requests to the judge during the loop: not answered from the cache", srv.Calls()-calls)
					}
					if baseline > 0 {
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/baseline, "x-map-lookup")
					}
				})
			}
		})
	}
}

// cachedRequest is a retrieval of chunks 500-byte chunks.
func cachedRequest(chunks int) judge.Request {
	req := judge.Request{Query: "How long does the ferry crossing to Orm take?", Reference: "Ninety minutes."}
	text := strings.Repeat("Ferries leave for the islands of Orm from the harbour every morning. ", 8)
	for i := range chunks {
		req.Chunks = append(req.Chunks, fmt.Sprintf("[%d] %s", i, text)[:500])
	}
	return req
}
