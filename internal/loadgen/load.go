package loadgen

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
)

// Options configures Start.
type Options struct {
	// Endpoint is the host:port of an OTLP/gRPC receiver.
	Endpoint string
	// Senders is the number of batches in flight at once, each sender on a
	// connection of its own, sending its next batch as soon as the last was
	// accepted.
	Senders int
	// Traffic is the shape of every batch.
	Traffic Traffic
	// Spans ends the load after this many spans, rounded up to whole
	// batches; 0 sends until Stop.
	Spans int64
	// Compression is "none" or "gzip", as the OTel SDKs offer.
	Compression string
	// Seed makes the texts and trace IDs repeatable.
	Seed uint64
}

// exportTimeout bounds one export. A receiver that takes this long is
// stuck; whether it kept the batch is then unknown, so the load fails
// rather than count it either way.
const exportTimeout = 30 * time.Second

// Retry of a refused batch: the collector's memory_limiter refuses data
// with a retryable status, as a receiver that is not up yet does.
const (
	firstRetry = 5 * time.Millisecond
	maxRetry   = 500 * time.Millisecond
)

// Stats counts what a load has sent so far.
type Stats struct {
	// Spans is the number of spans the receiver accepted.
	Spans int64
	// RetrievalSpans is how many of them were retrieval spans.
	RetrievalSpans int64
	// Batches is the number of export requests accepted.
	Batches int64
	// Refused is the number of export attempts refused with a retryable
	// status (and sent again).
	Refused int64
	// At is when the counts were taken.
	At time.Time
}

// Load is traffic being sent.
type Load struct {
	opts    Options
	conns   []*grpc.ClientConn
	stop    atomic.Bool
	claimed atomic.Int64 // batches started, against Options.Spans
	wg      sync.WaitGroup
	done    chan struct{}

	spans, retrievals, batches, refused atomic.Int64

	mu  sync.Mutex
	err error // the first error that stopped the load
}

// Start validates opts, connects and starts sending.
func Start(opts Options) (*Load, error) {
	if err := opts.Traffic.Validate(); err != nil {
		return nil, err
	}
	if opts.Senders < 1 {
		return nil, fmt.Errorf("senders must be at least 1, got %d", opts.Senders)
	}
	var callOpts []grpc.CallOption
	switch opts.Compression {
	case "", "none":
	case "gzip":
		callOpts = append(callOpts, grpc.UseCompressor(gzip.Name))
	default:
		return nil, fmt.Errorf("compression must be none or gzip, got %q", opts.Compression)
	}
	l := &Load{opts: opts, done: make(chan struct{})}
	for range opts.Senders {
		conn, err := grpc.NewClient(opts.Endpoint,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(callOpts...))
		if err != nil {
			l.closeConns()
			return nil, fmt.Errorf("connecting to %s: %w", opts.Endpoint, err)
		}
		l.conns = append(l.conns, conn)
	}
	// Batches are built before the first is sent, so that the start of the
	// load is not a burst of construction.
	batches := make([]*batch, opts.Senders)
	for i := range batches {
		batches[i] = newBatch(opts.Traffic, i, opts.Seed)
	}
	l.wg.Add(opts.Senders)
	for i, b := range batches {
		go l.send(ptraceotlp.NewGRPCClient(l.conns[i]), b)
	}
	go func() {
		l.wg.Wait()
		l.closeConns()
		close(l.done)
	}()
	return l, nil
}

func (l *Load) closeConns() {
	for _, c := range l.conns {
		_ = c.Close()
	}
}

// send is one sender's loop.
func (l *Load) send(client ptraceotlp.GRPCClient, b *batch) {
	defer l.wg.Done()
	maxBatches := int64(-1)
	if l.opts.Spans > 0 {
		size := int64(l.opts.Traffic.BatchSize)
		maxBatches = (l.opts.Spans + size - 1) / size
	}
	retrievals := int64(len(b.retrievals))
	size := int64(b.spans.Len())
	for !l.stop.Load() {
		if maxBatches >= 0 && l.claimed.Add(1) > maxBatches {
			return
		}
		b.fill(time.Now())
		req := ptraceotlp.NewExportRequestFromTraces(b.td)
		if !l.export(client, req) {
			return
		}
		l.spans.Add(size)
		l.retrievals.Add(retrievals)
		l.batches.Add(1)
	}
}

// export sends req until it is accepted (true), the load stops, or it is
// refused for good.
func (l *Load) export(client ptraceotlp.GRPCClient, req ptraceotlp.ExportRequest) bool {
	backoff := firstRetry
	for {
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		_, err := client.Export(ctx, req)
		cancel()
		if err == nil {
			return true
		}
		if !retryable(err) {
			l.fail(fmt.Errorf("export to %s: %w", l.opts.Endpoint, err))
			return false
		}
		l.refused.Add(1)
		if l.stop.Load() {
			return false
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, maxRetry)
	}
}

// retryable tells the statuses a receiver refuses a batch with and would
// accept it later.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}

func (l *Load) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.stop.Store(true)
}

// Stats counts what was accepted so far.
func (l *Load) Stats() Stats {
	return Stats{
		Spans: l.spans.Load(), RetrievalSpans: l.retrievals.Load(),
		Batches: l.batches.Load(), Refused: l.refused.Load(), At: time.Now(),
	}
}

// Done is closed when every sender has finished: Options.Spans were sent,
// the load failed, or Stop was called.
func (l *Load) Done() <-chan struct{} { return l.done }

// Stop lets the exports in flight finish (so that every span counted was
// accepted, and none accepted goes uncounted), stops sending and returns the
// final counts, and the error that stopped the load early, if any.
func (l *Load) Stop() (Stats, error) {
	l.stop.Store(true)
	<-l.done
	return l.Stats(), l.Err()
}

// Err is the error that stopped the load early, if any.
func (l *Load) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
