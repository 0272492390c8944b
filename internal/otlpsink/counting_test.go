package otlpsink

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// tracesOf builds resources × scopes × spans spans, each span with events
// and attributes whose field numbers (1, 2) repeat those on the path to the
// spans, so that a counter that looked at the wrong depth would miscount.
func tracesOf(resources, scopes, spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutInt("r", int64(r))
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		for range scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("scope")
			for range spans {
				s := ss.Spans().AppendEmpty()
				s.SetName("span")
				s.SetTraceID([16]byte{1, 2})
				s.SetSpanID([8]byte{3})
				s.Attributes().PutStr("k", "v")
				s.Events().AppendEmpty().SetName("event")
				s.Links().AppendEmpty().SetTraceID([16]byte{4})
			}
		}
	}
	// A resource with nothing in it counts nothing.
	td.ResourceSpans().AppendEmpty()
	return td
}

func TestCountSpansMatchesPdata(t *testing.T) {
	for _, shape := range [][3]int{{0, 0, 0}, {1, 1, 1}, {3, 2, 5}, {1, 4, 0}, {2, 1, 513}} {
		td := tracesOf(shape[0], shape[1], shape[2])
		raw, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		got, err := CountSpans(raw)
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if want := int64(td.SpanCount()); got != want {
			t.Fatalf("%v: counted %d spans, pdata says %d", shape, got, want)
		}
	}
}

func TestCountSpansRefusesMalformedInput(t *testing.T) {
	raw, err := ptraceotlp.NewExportRequestFromTraces(tracesOf(1, 1, 3)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"truncated":             raw[:len(raw)-3],
		"resource_spans varint": {0x08, 0x01}, // field 1, wire type 0
		"length past the end":   {0x0a, 0x7f, 0x00},
	} {
		if _, err := CountSpans(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The collector's OTLP exporter sends gzip-compressed requests by default;
// the counter takes both, counts every span and keeps nothing.
func TestCounterCountsWhatIsExported(t *testing.T) {
	c, err := StartCounting("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	conn, err := grpc.NewClient(c.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	big := tracesOf(2, 2, 3000) // 12,000 spans: over gRPC's default 4 MiB
	if _, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(big)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(tracesOf(1, 1, 7)), grpc.UseCompressor(gzip.Name)); err != nil {
		t.Fatal(err)
	}
	got, err := c.WaitForSpans(ctx, 12_007)
	if err != nil || got != 12_007 || c.Requests() != 2 {
		t.Fatalf("counted %d spans in %d requests (%v), want 12007 in 2", got, c.Requests(), err)
	}

	// Garbage is refused as such, and not counted.
	err = conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", &rawMessage{0x0a, 0x7f}, &rawMessage{}, grpc.ForceCodecV2(rawCodec{}))
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("malformed request: %v", err)
	}
	if c.Spans() != 12_007 {
		t.Fatalf("%d spans after a malformed request", c.Spans())
	}
}

// rawMessage and rawCodec send bytes as they are.
type rawMessage []byte

type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*rawMessage))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawMessage) = data.Materialize()
	return nil
}
