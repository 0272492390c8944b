package loadgen

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// Every span counted as sent arrived, in whole batches, and no more.
func TestLoadSendsWhatItCounts(t *testing.T) {
	sink, err := otlpsink.StartCounting("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	tr := DefaultTraffic()
	for _, compression := range []string{"none", "gzip"} {
		before := sink.Spans()
		l, err := Start(Options{Endpoint: sink.Addr(), Senders: 3, Traffic: tr, Spans: 5000, Compression: compression})
		if err != nil {
			t.Fatal(err)
		}
		<-l.Done()
		st, err := l.Stop()
		if err != nil {
			t.Fatal(err)
		}
		// 5000 spans round up to 10 batches of 512.
		if st.Spans != 5120 || st.Batches != 10 || st.RetrievalSpans != 10*int64(tr.RetrievalsPerBatch()) || st.Refused != 0 {
			t.Fatalf("%s: %+v", compression, st)
		}
		if got := sink.Spans() - before; got != st.Spans {
			t.Fatalf("%s: the sink counted %d spans, the load %d", compression, got, st.Spans)
		}
	}
}

// refusing answers Unavailable (what the memory_limiter's refusal becomes)
// to the first refusals exports, then accepts; or InvalidArgument to all.
type refusing struct {
	ptraceotlp.UnimplementedGRPCServer
	refusals int64
	invalid  bool
	calls    atomic.Int64
	accepted atomic.Int64
}

func (r *refusing) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	n := r.calls.Add(1)
	switch {
	case r.invalid:
		return ptraceotlp.NewExportResponse(), status.Error(codes.InvalidArgument, "no")
	case n <= r.refusals:
		return ptraceotlp.NewExportResponse(), status.Error(codes.Unavailable, "memory limit")
	}
	r.accepted.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

func serve(t *testing.T, srv ptraceotlp.GRPCServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func TestRefusedBatchesAreSentAgain(t *testing.T) {
	srv := &refusing{refusals: 3}
	l, err := Start(Options{Endpoint: serve(t, srv), Senders: 1, Traffic: DefaultTraffic(), Spans: 1024})
	if err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	st, err := l.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if st.Spans != 1024 || st.Refused != 3 || srv.accepted.Load() != 1024 {
		t.Fatalf("%+v, server accepted %d", st, srv.accepted.Load())
	}
}

func TestAPermanentRefusalStopsTheLoad(t *testing.T) {
	l, err := Start(Options{Endpoint: serve(t, &refusing{invalid: true}), Senders: 2, Traffic: DefaultTraffic()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the load went on")
	}
	st, err := l.Stop()
	if err == nil || !strings.Contains(err.Error(), "InvalidArgument") || st.Spans != 0 {
		t.Fatalf("%+v, %v", st, err)
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	tr := DefaultTraffic()
	tr.ChunkBytes = 10
	for _, o := range []Options{
		{Endpoint: "127.0.0.1:1", Senders: 1, Traffic: tr},
		{Endpoint: "127.0.0.1:1", Senders: 0, Traffic: DefaultTraffic()},
		{Endpoint: "127.0.0.1:1", Senders: 1, Traffic: DefaultTraffic(), Compression: "zstd"},
	} {
		if l, err := Start(o); err == nil {
			l.Stop()
			t.Errorf("%+v accepted", o)
		}
	}
}
