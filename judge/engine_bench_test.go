package judge_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/internal/judgetest"
)

// BenchmarkJudgedThroughput judges distinct retrievals (no cache, every chunk
// a request) through the real go-openai client against a local server that
// answers after a fixed latency, with more judgements waiting than slots,
// and reports the spans judged per second as a share of Little's-law limit,
// slots / latency requests per second: what any scheduler could do with
// those slots. A longer -benchtime shrinks the share of filling and draining.
//
//	go test -run '^$' -bench JudgedThroughput -benchtime 5s ./judge/
func BenchmarkJudgedThroughput(b *testing.B) {
	const (
		latency = 100 * time.Millisecond
		slots   = 8
	)
	for _, chunks := range []int{1, 4} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			srv := chattest.NewServer(fixedLatency(latency))
			defer srv.Close()
			c := judgetest.NewLLM(srv.URL)
			c.Model, c.APIKey, c.Timeout = "bench-judge", "", 10*time.Second
			c.MaxConcurrency, c.MaxRetries, c.CacheSize = slots, 0, 0
			e := c.New(b)
			var seq atomic.Int64
			// Twice as many judgements waiting as there are slots: the
			// scheduler always has a request to send when a slot frees.
			b.SetParallelism(2 * slots)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.Judge(context.Background(), distinctRequest(seq.Add(1), chunks)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if got, want := srv.Calls(), int64(b.N*chunks); got != want {
				b.Fatalf("%d requests for %d spans of %d chunks", got, b.N, chunks)
			}
			if inFlight := srv.MaxInFlight(); inFlight > slots {
				b.Fatalf("%d requests in flight with %d slots", inFlight, slots)
			}
			achieved := float64(b.N) / b.Elapsed().Seconds()
			limit := float64(slots) / latency.Seconds() / float64(chunks)
			b.ReportMetric(achieved, "spans/s")
			b.ReportMetric(limit, "limit-spans/s")
			b.ReportMetric(achieved/limit, "of-limit")
		})
	}
}

// fixedLatency answers every chunk "yes" when it says yes, after latency.
func fixedLatency(latency time.Duration) chattest.Handler {
	keyword := chattest.KeywordJudge("yes")
	return func(n int, r chattest.Request) chattest.Reply {
		rep := keyword(n, r)
		rep.Delay = latency
		return rep
	}
}

// distinctRequest is retrieval number n: no chunk of it appears in any
// other, so neither the cache nor de-duplication of requests in flight
// can answer it.
func distinctRequest(n int64, chunks int) judge.Request {
	req := judge.Request{Query: "Which harbour has a lighthouse?", Reference: "Velmora's, rebuilt in 1889."}
	for i := range chunks {
		verdict := "no"
		if i%2 == 0 {
			verdict = "yes"
		}
		req.Chunks = append(req.Chunks, "chunk "+strconv.FormatInt(n, 10)+"-"+strconv.Itoa(i)+": "+verdict+", "+
			strings.Repeat("the lighthouse at the end of the east pier ", 10))
	}
	return req
}
