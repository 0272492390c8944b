package loadgen

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// batch is one sender's batch: built once, refilled before every send.
type batch struct {
	traffic Traffic
	sender  int
	rng     *rand.Rand
	texts   *texts
	seq     uint64 // traces made so far; part of every trace ID
	made    uint64 // retrievals made so far; part of every text's tag

	td         ptrace.Traces
	spans      ptrace.SpanSlice
	retrievals []retrievalSpan
	// oiKeys are the OpenInference keys of each chunk: id, then content.
	oiKeys [][2]string
	// recent are retrievals sent before, for RepeatShare to repeat.
	recent []retrieval
	next   int
}

// retrievalSpan is a retrieval span of the batch and the dialect it is in.
type retrievalSpan struct {
	span    ptrace.Span
	dialect Dialect
}

// recentRetrievals is how many earlier retrievals a sender can repeat.
const recentRetrievals = 64

// spanDuration is every span's length; it does not matter to the collector.
const spanDuration = 5 * time.Millisecond

// newBatch lays out the batch: plain spans, with the retrieval spans spread
// evenly among them, each dialect in its share.
func newBatch(t Traffic, sender int, seed uint64) *batch {
	rng := rand.New(rand.NewPCG(seed, uint64(sender)))
	b := &batch{traffic: t, sender: sender, rng: rng, texts: newTexts(rng, t.ChunkBytes), td: ptrace.NewTraces()}
	rs := b.td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", "ragload")
	res.PutStr("service.instance.id", "sender-"+strconv.Itoa(sender))
	res.PutStr("telemetry.sdk.language", "go")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("ragload")
	b.spans = ss.Spans()
	b.spans.EnsureCapacity(t.BatchSize)
	for i := range t.Chunks {
		b.oiKeys = append(b.oiKeys, [2]string{oiKey(i, "id"), oiKey(i, "content")})
	}

	n := t.RetrievalsPerBatch()
	dialects := t.Dialects.assign(n)
	r := 0
	for i := range t.BatchSize {
		s := b.spans.AppendEmpty()
		// Retrieval span r goes at position floor(r × BatchSize / n).
		if r < n && i == r*t.BatchSize/n {
			b.layoutRetrieval(s, dialects[r])
			b.retrievals = append(b.retrievals, retrievalSpan{s, dialects[r]})
			r++
			continue
		}
		layoutPlain(s, i)
	}
	return b
}

// layoutPlain gives s the attributes of an HTTP server span of an LLM
// application: eight of them, one a traceloop.entity.output that is not a
// retrieval, which a span reader has to look into to tell.
func layoutPlain(s ptrace.Span, i int) {
	s.SetName("GET /items/" + strconv.Itoa(i%16))
	s.SetKind(ptrace.SpanKindServer)
	a := s.Attributes()
	a.EnsureCapacity(8)
	a.PutStr("http.request.method", "GET")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("url.path", "/items")
	a.PutStr("server.address", "shop.internal")
	a.PutStr("user_agent.original", "Mozilla/5.0")
	a.PutStr("network.protocol.version", "1.1")
	a.PutDouble("app.cart.total", 42.5)
	a.PutStr("traceloop.entity.output", `{"result": "ok", "items": [1, 2, 3]}`)
}

// layoutRetrieval puts the keys of dialect d on s, with empty texts that
// fill replaces.
func (b *batch) layoutRetrieval(s ptrace.Span, d Dialect) {
	n := b.traffic.Chunks
	s.SetKind(ptrace.SpanKindClient)
	a := s.Attributes()
	a.PutStr(ReferenceKey, "")
	switch d {
	case DialectProject:
		s.SetName("retrieve")
		a.PutStr("rag.query", "")
		chunks := a.PutEmptySlice("rag.chunks")
		for range n {
			chunks.AppendEmpty().SetStr("")
		}
	case DialectGenAI:
		s.SetName("retrieval handbook")
		a.PutStr("gen_ai.operation.name", "retrieval")
		a.PutStr("gen_ai.data_source.id", "handbook")
		a.PutStr("gen_ai.retrieval.query.text", "")
		a.PutStr("gen_ai.retrieval.documents", "")
	case DialectOpenInference:
		s.SetName("retriever")
		a.PutStr("openinference.span.kind", "RETRIEVER")
		a.PutStr("input.value", "")
		for _, k := range b.oiKeys {
			a.PutStr(k[0], "")
			a.PutStr(k[1], "")
		}
	case DialectOpenLLMetry:
		s.SetName("chroma.query")
		a.PutStr("traceloop.span.kind", "task")
		a.PutStr("db.system", "chroma")
		a.PutStr("db.query.text", "")
		for range n {
			e := s.Events().AppendEmpty()
			e.SetName("db.query.result")
			e.Attributes().PutStr("db.query.result.id", "")
			e.Attributes().PutStr("db.query.result.document", "")
		}
	}
}

func oiKey(i int, field string) string {
	return "retrieval.documents." + strconv.Itoa(i) + ".document." + field
}

// fill makes the batch new: every span a trace of its own, with a fresh
// trace ID whose low 56 bits are random (what trace-ID sampling decides on),
// and every retrieval span new texts (or, at RepeatShare, earlier ones).
func (b *batch) fill(now time.Time) {
	end := pcommon.NewTimestampFromTime(now)
	start := pcommon.NewTimestampFromTime(now.Add(-spanDuration))
	for i := 0; i < b.spans.Len(); i++ {
		s := b.spans.At(i)
		s.SetTraceID(b.traceID())
		s.SetSpanID(b.spanID())
		s.SetStartTimestamp(start)
		s.SetEndTimestamp(end)
	}
	for _, rs := range b.retrievals {
		b.write(rs, b.nextRetrieval())
	}
}

// traceID is unique (sender and sequence number in the high 8 bytes) and
// random in its low 8 bytes.
func (b *batch) traceID() pcommon.TraceID {
	b.seq++
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], uint64(b.sender)<<56|b.seq&(1<<56-1))
	binary.BigEndian.PutUint64(id[8:], b.rng.Uint64())
	return id
}

func (b *batch) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], b.rng.Uint64()|1) // never all zero
	return id
}

// nextRetrieval is a new retrieval, or at RepeatShare one sent before.
func (b *batch) nextRetrieval() retrieval {
	t := b.traffic
	if t.RepeatShare > 0 && len(b.recent) > 0 && b.rng.Float64() < t.RepeatShare {
		return b.recent[b.rng.IntN(len(b.recent))]
	}
	b.made++
	r := b.texts.newRetrieval(b.rng, b.sender, b.made, t.Chunks)
	if t.RepeatShare > 0 {
		if len(b.recent) < recentRetrievals {
			b.recent = append(b.recent, r)
		} else {
			b.recent[b.next] = r
			b.next = (b.next + 1) % recentRetrievals
		}
	}
	return r
}

// write puts r on the retrieval span in its dialect's keys.
func (b *batch) write(rs retrievalSpan, r retrieval) {
	a := rs.span.Attributes()
	set := func(key, value string) {
		v, _ := a.Get(key)
		v.SetStr(value)
	}
	set(ReferenceKey, r.reference)
	switch rs.dialect {
	case DialectProject:
		set("rag.query", r.query)
		v, _ := a.Get("rag.chunks")
		chunks := v.Slice()
		for i, c := range r.chunks {
			chunks.At(i).SetStr(c)
		}
	case DialectGenAI:
		set("gen_ai.retrieval.query.text", r.query)
		set("gen_ai.retrieval.documents", documentsJSON(r))
	case DialectOpenInference:
		set("input.value", r.query)
		for i, c := range r.chunks {
			set(b.oiKeys[i][0], r.ids[i])
			set(b.oiKeys[i][1], c)
		}
	case DialectOpenLLMetry:
		set("db.query.text", r.query)
		events := rs.span.Events()
		for i, c := range r.chunks {
			ea := events.At(i).Attributes()
			id, _ := ea.Get("db.query.result.id")
			id.SetStr(r.ids[i])
			doc, _ := ea.Get("db.query.result.document")
			doc.SetStr(c)
		}
	}
}
