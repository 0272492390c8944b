package ragprecisionprocessor

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ragprecision/ragprecision/internal/spanreader"
)

// traceAnswer is what a trace has said about its answer so far, and what
// the answer memory needs to keep it.
type traceAnswer struct {
	spanreader.JoinedAnswer
	seen  time.Time // when it was last updated
	bytes int64
}

// answerMemory remembers the answers of recent traces (trace_join) for
// trace_join.wait, bounded by trace_join.max_traces and max_bytes, so that
// a retrieval span exported after its trace's answer (by another process,
// or in a later batch) is judged at once rather than waiting out
// trace_join.wait and ending no_reference. It is used under the
// processor's lock.
type answerMemory struct {
	lru      *simplelru.LRU[pcommon.TraceID, *traceAnswer]
	bytes    int64
	maxBytes int64
	ttl      time.Duration
	// evicted counts answers forgotten before their time for lack of room.
	evicted func(n int64)
}

func newAnswerMemory(maxTraces int, maxBytes int64, ttl time.Duration, evicted func(int64)) *answerMemory {
	m := &answerMemory{maxBytes: maxBytes, ttl: ttl, evicted: evicted}
	l, err := simplelru.NewLRU[pcommon.TraceID, *traceAnswer](maxTraces, func(_ pcommon.TraceID, a *traceAnswer) {
		m.bytes -= a.bytes
	})
	if err != nil {
		panic(err) // only for a size below 1, which Validate refuses
	}
	m.lru = l
	return m
}

// get returns what is known of trace id, if it is recent.
func (m *answerMemory) get(id pcommon.TraceID, now time.Time) (*traceAnswer, bool) {
	a, ok := m.lru.Get(id)
	if !ok {
		return nil, false
	}
	if now.Sub(a.seen) > m.ttl {
		m.lru.Remove(id)
		return nil, false
	}
	return a, true
}

// record notes an answer-bearing span of trace id (see observe).
func (m *answerMemory) record(id pcommon.TraceID, text string, root bool, end pcommon.Timestamp, now time.Time) {
	a, ok := m.get(id, now)
	if !ok {
		a = &traceAnswer{}
	}
	before := a.bytes
	a.Observe(text, root, end)
	a.seen = now
	a.bytes = a.Bytes()
	if text := int64(len(text)); text > m.maxBytes {
		// One answer larger than the whole memory is not kept.
		if ok {
			a.bytes = before // what m.bytes counts, and the eviction subtracts
			m.lru.Remove(id)
		}
		return
	}
	if ok {
		m.bytes += a.bytes - before
	} else {
		m.bytes += a.bytes
		if m.lru.Add(id, a) {
			m.evicted(1) // Add evicted the least recent to make room
		}
	}
	for m.bytes > m.maxBytes && m.lru.Len() > 1 {
		m.lru.RemoveOldest()
		m.evicted(1)
	}
}

// len is the number of traces remembered.
func (m *answerMemory) len() int { return m.lru.Len() }
