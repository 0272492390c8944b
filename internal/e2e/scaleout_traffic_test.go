package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ragprecision/ragprecision/internal/otlpsink"
)

// This file makes reproducible RAG traffic for the scale-out tests: the same
// trace IDs, spans and chunks on every run, so that what a tier of replicas
// makes of it can be compared span by span with what one collector makes of
// it. Each trace is an OpenInference chain (the root span, carrying the
// generated answer), a retriever span without an answer (so its reference
// must come from the root: trace_join) and a plain span.

type ragTrace struct {
	id                     pcommon.TraceID
	root, retrieval, plain pcommon.SpanID
	service                string
	source                 string // the retriever span's name: the data_source label
	question, answer       string
	chunks                 []string
	// rootFirst: the root span travels in the first request and the
	// retriever in the second (the answer is remembered), else the other
	// way round (the retriever waits for its root).
	rootFirst bool
}

var ragTopics = []struct {
	question, answer string
	relevant, other  []string
}{
	{"Where is the Louvre?", "The Louvre is in Paris.",
		[]string{"The Louvre museum stands on the right bank of the Seine in Paris.", "Paris is home to the Louvre, the most visited museum in the world."},
		[]string{"The Prado is the main art museum of Madrid.", "Museum Island in Berlin holds five museums.", "The Uffizi gallery is in Florence."}},
	{"Who wrote Hamlet?", "Hamlet was written by William Shakespeare.",
		[]string{"William Shakespeare wrote Hamlet around 1600.", "Hamlet, Prince of Denmark, is a tragedy by Shakespeare."},
		[]string{"Christopher Marlowe wrote Doctor Faustus.", "Goethe wrote Faust in two parts.", "Moliere wrote comedies for the French court."}},
	{"What is the boiling point of water at sea level?", "Water boils at 100 degrees Celsius at sea level.",
		[]string{"At sea level water boils at 100 degrees Celsius.", "The boiling point of water drops with altitude; at sea level it is 100 C."},
		[]string{"Ethanol boils at 78 degrees Celsius.", "Water freezes at 0 degrees Celsius.", "Mercury is liquid at room temperature."}},
	{"Which planet is the largest?", "Jupiter is the largest planet in the solar system.",
		[]string{"Jupiter is the largest planet of the solar system, a gas giant.", "The largest planet, Jupiter, has more than ninety moons."},
		[]string{"Mars is called the red planet.", "Venus is the hottest planet.", "Saturn is known for its rings."}},
}

// ragTraffic makes n traces from seed.
func ragTraffic(n int, seed uint64) []ragTrace {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	spanID := func() pcommon.SpanID {
		var id pcommon.SpanID
		binary.BigEndian.PutUint64(id[:], rng.Uint64()|1)
		return id
	}
	out := make([]ragTrace, n)
	for i := range out {
		topic := ragTopics[rng.IntN(len(ragTopics))]
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[:8], rng.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rng.Uint64())
		pool := append(append([]string(nil), topic.relevant...), topic.other...)
		rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
		out[i] = ragTrace{
			id: tid, root: spanID(), retrieval: spanID(), plain: spanID(),
			service:   fmt.Sprintf("rag-svc-%d", i%2),
			source:    fmt.Sprintf("retrieve-kb-%d", i%3),
			question:  topic.question,
			answer:    topic.answer,
			chunks:    pool[:2+rng.IntN(len(pool)-1)],
			rootFirst: i%4 == 0,
		}
	}
	return out
}

// ragRequests packs traces into OTLP requests of perRequest traces each, as
// an SDK would batch them: for every group, one request with the part of each
// trace that ends first and one with the rest, so that a trace's root span
// and its retriever span always travel in different requests.
func ragRequests(traces []ragTrace, perRequest int) []ptrace.Traces {
	var out []ptrace.Traces
	for start := 0; start < len(traces); start += perRequest {
		group := traces[start:min(start+perRequest, len(traces))]
		first, second := ptrace.NewTraces(), ptrace.NewTraces()
		for _, tr := range group {
			roots, rest := first, second
			if !tr.rootFirst {
				roots, rest = second, first
			}
			tr.appendRoot(scopeFor(roots, tr.service))
			tr.appendRetrieval(scopeFor(rest, tr.service))
		}
		out = append(out, first, second)
	}
	return out
}

// scopeFor returns the span slice of td's resource for service, adding it.
func scopeFor(td ptrace.Traces, service string) ptrace.SpanSlice {
	for _, rs := range td.ResourceSpans().All() {
		if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() == service {
			return rs.ScopeSpans().At(0).Spans()
		}
	}
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e-rag")
	return ss.Spans()
}

var trafficEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (tr ragTrace) appendRoot(spans ptrace.SpanSlice) {
	s := spans.AppendEmpty()
	s.SetTraceID(tr.id)
	s.SetSpanID(tr.root)
	s.SetName("chain")
	s.SetKind(ptrace.SpanKindServer)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(trafficEpoch))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(trafficEpoch.Add(time.Second)))
	a := s.Attributes()
	a.PutStr("openinference.span.kind", "CHAIN")
	a.PutStr("input.value", tr.question)
	a.PutStr("output.value", tr.answer)
}

func (tr ragTrace) appendRetrieval(spans ptrace.SpanSlice) {
	s := spans.AppendEmpty()
	s.SetTraceID(tr.id)
	s.SetSpanID(tr.retrieval)
	s.SetParentSpanID(tr.root)
	s.SetName(tr.source)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(trafficEpoch.Add(10 * time.Millisecond)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(trafficEpoch.Add(200 * time.Millisecond)))
	a := s.Attributes()
	a.PutStr("openinference.span.kind", "RETRIEVER")
	a.PutStr("input.value", tr.question)
	for i, c := range tr.chunks {
		a.PutStr(fmt.Sprintf("retrieval.documents.%d.document.content", i), c)
	}
	p := spans.AppendEmpty()
	p.SetTraceID(tr.id)
	p.SetSpanID(tr.plain)
	p.SetParentSpanID(tr.root)
	p.SetName("render")
	p.SetStartTimestamp(pcommon.NewTimestampFromTime(trafficEpoch.Add(300 * time.Millisecond)))
	p.SetEndTimestamp(pcommon.NewTimestampFromTime(trafficEpoch.Add(900 * time.Millisecond)))
	p.Attributes().PutStr("http.route", "/ask")
}

// otlpSender exports requests over OTLP/gRPC and, like an SDK's exporter,
// retries a request the collector refuses with a retryable code.
type otlpSender struct {
	conn    *grpc.ClientConn
	client  ptraceotlp.GRPCClient
	retries int // retries of refused requests
	failed  int // requests given up after maxAttempts
}

func newOTLPSender(t *testing.T, endpoint string) *otlpSender {
	t.Helper()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &otlpSender{conn: conn, client: ptraceotlp.NewGRPCClient(conn)}
}

const maxAttempts = 6

// send exports td; it returns the error of the last attempt.
func (s *otlpSender) send(ctx context.Context, td ptrace.Traces) error {
	backoff := 100 * time.Millisecond
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = s.client.Export(attemptCtx, ptraceotlp.NewExportRequestFromTraces(td))
		cancel()
		if err == nil {
			return nil
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.DeadlineExceeded, codes.Canceled, codes.Internal, codes.Unknown:
		default:
			s.failed++
			return err
		}
		if attempt < maxAttempts {
			s.retries++
			time.Sleep(backoff)
			backoff *= 2
		}
	}
	s.failed++
	return err
}

// arrival is what the sinks received of one span.
type arrival struct {
	count  int
	sink   int // index of the sink it (last) arrived at
	name   string
	status string
	cp     float64
	refSrc string
}

// arrivals indexes everything the sinks received by span ID.
func arrivals(sinks ...*otlpsink.Sink) map[pcommon.SpanID]*arrival {
	out := map[pcommon.SpanID]*arrival{}
	for i, sink := range sinks {
		for _, td := range sink.Traces() {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, s := range ss.Spans().All() {
						a := out[s.SpanID()]
						if a == nil {
							a = &arrival{}
							out[s.SpanID()] = a
						}
						a.count++
						a.sink = i
						a.name = s.Name()
						attrs := s.Attributes()
						if v, ok := attrs.Get("rag.contextual_precision.status"); ok {
							a.status = v.Str()
						}
						if v, ok := attrs.Get("rag.contextual_precision"); ok {
							a.cp = v.Double()
						}
						if v, ok := attrs.Get("rag.contextual_precision.reference_source"); ok {
							a.refSrc = v.Str()
						}
					}
				}
			}
		}
	}
	return out
}

// spanCount is the number of spans traces make: three each.
func spanCount(traces []ragTrace) int { return 3 * len(traces) }

// waitSettled waits until the sinks together hold every span of traces
// (duplicates do not count), or no new span has arrived for quiet, or
// timeout passes; it returns the number of distinct spans that arrived.
func waitSettled(traces []ragTrace, quiet, timeout time.Duration, sinks ...*otlpsink.Sink) int {
	want := spanCount(traces)
	distinct := func() int {
		got := arrivals(sinks...)
		n := 0
		for _, tr := range traces {
			for _, id := range []pcommon.SpanID{tr.root, tr.retrieval, tr.plain} {
				if got[id] != nil {
					n++
				}
			}
		}
		return n
	}
	deadline := time.Now().Add(timeout)
	last, lastChange := distinct(), time.Now()
	for {
		n := distinct()
		if n != last {
			last, lastChange = n, time.Now()
		}
		if n >= want || time.Since(lastChange) >= quiet || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}
