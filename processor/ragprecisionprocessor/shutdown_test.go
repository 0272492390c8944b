package ragprecisionprocessor

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor/internal/metadata"
)

func TestVerifyShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), NewFactory().CreateDefaultConfig())
}

// Shutdown must also forward what it holds when the factory's own path is
// used with retrieval spans, as processortest does with plain ones.
func TestShutdownForwardsHeldSpansThroughFactory(t *testing.T) {
	f := NewFactory()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		b := newBatch("svc")
		b.project(fmt.Sprintf("r%d", i), question, "Paris", capitalChunks...)
		b.plain(fmt.Sprintf("p%d", i))
		if err := p.ConsumeTraces(context.Background(), b.td); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.SpanCount() != 100 {
		t.Fatalf("%d spans after Shutdown, want 100", sink.SpanCount())
	}
}

// Shutdown returns within shutdown_timeout plus a small constant whatever
// the next consumer does, and counts what it could not forward.
func TestShutdownIsBoundedWithBlockingConsumer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		honorsCtx bool
	}{{"consumer waits for its context", true}, {"consumer ignores its context", false}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			sink := &blockingSink{release: release, honorsCtx: tc.honorsCtx}
			srv := chatServer(t, chattest.KeywordJudge("Paris"))
			h := newHarnessNext(t, sink, &sink.TracesSink, func(c *config.Config) {
				llmJudge(srv.URL)(c)
				c.ShutdownTimeout = 100 * time.Millisecond
			})
			b := newBatch("svc")
			b.project("retrieve", "q", "Paris", capitalChunks...)
			b.plain("plain")
			sink.block.Store(false)
			h.consume(b.td) // the plain span goes on at once
			sink.block.Store(true)
			sink.waitBlocked(t)
			start := time.Now()
			if err := h.p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 100*time.Millisecond+shutdownGrace+400*time.Millisecond {
				t.Fatalf("Shutdown took %s with shutdown_timeout 100ms", took)
			}
			if n := counterValue(t, h.tel, metricDropped, map[string]string{labelReason: dropShutdown}); n != 1 {
				t.Fatalf("dropped{shutdown} = %d, want the one span the consumer held", n)
			}
		})
	}
}

// blockingSink blocks every call while block is set: until its context
// ends, or, when it ignores its context, until release.
type blockingSink struct {
	consumertest.TracesSink
	block     atomic.Bool
	honorsCtx bool
	release   chan struct{}
	blocked   atomic.Int64
}

func (s *blockingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if !s.block.Load() {
		return s.TracesSink.ConsumeTraces(ctx, td)
	}
	s.blocked.Add(1)
	if s.honorsCtx {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.release:
		}
	} else {
		<-s.release
	}
	return fmt.Errorf("downstream gave up")
}

func (s *blockingSink) waitBlocked(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.blocked.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the held span never reached the consumer")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestProcessorChaosShutdownEarly(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runProcessorChaos(t, seed, true) })
	}
}

func TestStatusShutdown(t *testing.T) {
	h, _ := newBlockedHarness(t, nil)
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	if h.sink.SpanCount() != 0 {
		t.Fatal("span not held")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h.shutdown(ctx)
	if h.sink.SpanCount() != 1 {
		t.Fatalf("Shutdown returned with %d spans forwarded, want 1", h.sink.SpanCount())
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusShutdown)

	// After Shutdown, selected spans pass at once with status shutdown.
	b = newBatch("svc")
	b.project("late", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	expectStatus(t, h.span("late"), ragattr.StatusShutdown)
}

// Shutdown with time to spare lets in-flight judgements finish.
func TestShutdownWaitsForJudgements(t *testing.T) {
	srv := chatServer(t, func(n int, r chattest.Request) chattest.Reply {
		rep := chattest.KeywordJudge("Paris")(n, r)
		rep.Delay = 50 * time.Millisecond
		return rep
	})
	h := newHarness(t, llmJudge(srv.URL))
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	h.shutdown(context.Background())
	if got := attrStr(h.span("retrieve"), ragattr.Status); got != ragattr.StatusScored {
		t.Fatalf("status %q, want scored", got)
	}
}

// Shutdown is bounded by shutdown_timeout even when the collector gives it
// no deadline, as the collector does.
func TestShutdownTimeout(t *testing.T) {
	h, _ := newBlockedHarness(t, func(c *config.Config) { c.ShutdownTimeout = 100 * time.Millisecond })
	b := newBatch("svc")
	b.project("retrieve", "q", "Paris", capitalChunks...)
	h.consume(b.td)
	start := time.Now()
	h.shutdown(context.Background())
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %s", d)
	}
	expectStatus(t, h.span("retrieve"), ragattr.StatusShutdown)
}
