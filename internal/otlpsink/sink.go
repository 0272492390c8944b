// Package otlpsink is a minimal OTLP trace endpoint, over gRPC (Start) or
// HTTP (StartHTTP), that keeps what it receives. The demo and the end-to-end
// test point a collector's OTLP exporter at it to see the spans the
// collector sends on.
package otlpsink

import (
	"context"
	"net"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// Sink receives OTLP traces.
type Sink struct {
	ptraceotlp.UnimplementedGRPCServer

	server     *grpc.Server // nil when serving HTTP
	httpServer *http.Server // nil when serving gRPC
	lis        net.Listener

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every export
	traces  []ptrace.Traces
	spans   int
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves.
func Start(addr string) (*Sink, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Sink{server: grpc.NewServer(), lis: lis, changed: make(chan struct{})}
	ptraceotlp.RegisterGRPCServer(s.server, s)
	go func() { _ = s.server.Serve(lis) }()
	return s, nil
}

// Addr is the host:port the sink listens on.
func (s *Sink) Addr() string { return s.lis.Addr().String() }

// Export implements ptraceotlp.GRPCServer.
func (s *Sink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td)
	s.record(td)
	return ptraceotlp.NewExportResponse(), nil
}

// record keeps td and wakes WaitForSpans.
func (s *Sink) record(td ptrace.Traces) {
	s.mu.Lock()
	s.traces = append(s.traces, td)
	s.spans += td.SpanCount()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Traces returns everything received so far.
func (s *Sink) Traces() []ptrace.Traces {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ptrace.Traces(nil), s.traces...)
}

// SpanCount is the number of spans received so far.
func (s *Sink) SpanCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans
}

// WaitForSpans blocks until at least n spans have arrived or ctx ends, and
// returns the count reached.
func (s *Sink) WaitForSpans(ctx context.Context, n int) (int, error) {
	count, err := waitUntil(ctx, int64(n), func() (int64, <-chan struct{}) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return int64(s.spans), s.changed
	})
	return int(count), err
}

// waitUntil blocks until the count read reports reaches n or ctx ends. read
// returns the count and a channel closed at the next change, taken together
// under the sink's lock so no change is missed between them.
func waitUntil(ctx context.Context, n int64, read func() (int64, <-chan struct{})) (int64, error) {
	for {
		count, changed := read()
		if count >= n {
			return count, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return count, ctx.Err()
		}
	}
}

// Stop stops serving.
func (s *Sink) Stop() {
	if s.server != nil {
		s.server.Stop()
	}
	if s.httpServer != nil {
		_ = s.httpServer.Close()
	}
}
