package otlpsink

import (
	"context"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the collector's OTLP exporter compresses with gzip by default
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// Counter is an OTLP/gRPC trace endpoint that counts the spans it receives
// and keeps nothing. Benchmarks export to it at hundreds of thousands of
// spans per second: it reads the request's protobuf wire format only as
// deep as the span list (no span is decoded into pdata), so that the sink
// takes little of the CPU that the collector it measures shares.
type Counter struct {
	server *grpc.Server
	lis    net.Listener

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every export
	spans    int64
	requests int64
}

// maxCountedRequest bounds one export request: the batch processor's
// default batches of 8192 spans exceed gRPC's default of 4 MiB.
const maxCountedRequest = 256 << 20

// StartCounting listens on addr ("127.0.0.1:0" for a free port) and
// serves the OTLP trace service, counting spans.
func StartCounting(addr string) (*Counter, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Counter{lis: lis, changed: make(chan struct{})}
	c.server = grpc.NewServer(grpc.ForceServerCodecV2(countingCodec{}), grpc.MaxRecvMsgSize(maxCountedRequest))
	c.server.RegisterService(&grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.trace.v1.TraceService",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: c.export}},
		Metadata:    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
	}, c)
	go func() { _ = c.server.Serve(lis) }()
	return c, nil
}

// Addr is the host:port the counter listens on.
func (c *Counter) Addr() string { return c.lis.Addr().String() }

// export is the unary handler of TraceService/Export.
func (c *Counter) export(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req countedRequest
	if err := dec(&req); err != nil {
		return nil, err
	}
	if req.err != nil {
		return nil, status.Error(codes.InvalidArgument, req.err.Error())
	}
	c.mu.Lock()
	c.spans += req.spans
	c.requests++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return emptyResponse{}, nil
}

// Spans is the number of spans received so far.
func (c *Counter) Spans() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spans
}

// Requests is the number of export requests received so far.
func (c *Counter) Requests() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// WaitForSpans blocks until at least n spans have arrived or ctx ends, and
// returns the count reached.
func (c *Counter) WaitForSpans(ctx context.Context, n int64) (int64, error) {
	return waitUntil(ctx, n, func() (int64, <-chan struct{}) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.spans, c.changed
	})
}

// Stop stops serving at once.
func (c *Counter) Stop() { c.server.Stop() }

// countedRequest is what the codec makes of an ExportTraceServiceRequest:
// its span count, or why it is not one. (An error returned by the codec
// itself would reach the client as Internal, not InvalidArgument.)
type countedRequest struct {
	spans int64
	err   error
}

// emptyResponse is an ExportTraceServiceResponse with no partial success:
// zero bytes on the wire.
type emptyResponse struct{}

// countingCodec decodes requests into countedRequest and encodes
// emptyResponse.
type countingCodec struct{}

func (countingCodec) Name() string { return "proto" }

func (countingCodec) Marshal(v any) (mem.BufferSlice, error) {
	if _, ok := v.(emptyResponse); !ok {
		return nil, fmt.Errorf("otlpsink: cannot encode %T", v)
	}
	return mem.BufferSlice{}, nil
}

var requestBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*countedRequest)
	if !ok {
		return fmt.Errorf("otlpsink: cannot decode into %T", v)
	}
	var raw []byte
	if len(data) == 1 {
		raw = data[0].ReadOnlyData()
	} else {
		bp := requestBuffers.Get().(*[]byte)
		defer requestBuffers.Put(bp)
		if cap(*bp) < data.Len() {
			*bp = make([]byte, data.Len())
		}
		raw = (*bp)[:data.Len()]
		data.CopyTo(raw)
	}
	req.spans, req.err = CountSpans(raw)
	return nil
}

// Field numbers of the OTLP trace messages on the path to the spans.
const (
	fieldResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	fieldScopeSpans    = 2 // ResourceSpans.scope_spans
	fieldSpans         = 2 // ScopeSpans.spans
)

// CountSpans counts the spans of an encoded ExportTraceServiceRequest (or
// TracesData, which has the same layout), checking the wire format of
// every message on the way to them.
func CountSpans(b []byte) (int64, error) {
	var total int64
	err := eachMessage(b, fieldResourceSpans, func(rs []byte) error {
		return eachMessage(rs, fieldScopeSpans, func(ss []byte) error {
			return eachMessage(ss, fieldSpans, func([]byte) error {
				total++
				return nil
			})
		})
	})
	return total, err
}

// eachMessage calls f with the bytes of every field numbered num of message
// b, which must be length-delimited (a message), and skips other fields.
func eachMessage(b []byte, num protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		n, typ, size := protowire.ConsumeTag(b)
		if size < 0 {
			return protowire.ParseError(size)
		}
		b = b[size:]
		if n != num {
			size = protowire.ConsumeFieldValue(n, typ, b)
			if size < 0 {
				return protowire.ParseError(size)
			}
			b = b[size:]
			continue
		}
		if typ != protowire.BytesType {
			return fmt.Errorf("field %d has wire type %d, want a message", n, typ)
		}
		v, size := protowire.ConsumeBytes(b)
		if size < 0 {
			return protowire.ParseError(size)
		}
		b = b[size:]
		if err := f(v); err != nil {
			return err
		}
	}
	return nil
}
