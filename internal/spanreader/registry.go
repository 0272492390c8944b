package spanreader

import (
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A dialect is one instrumentation convention for retrieval spans (the
// docs/SOURCES.md's dialect table). Adding one is a file that implements dialect
// (with its own _test file and fuzz target, listed in the Makefile's fuzz
// target), its line in dialects below (numDialects counts them) and its
// case in classifyAs; a line in answerers too if its model calls carry the
// trace's answer.
//
// Recognising a span is two steps. classify runs on every span that has one
// of the dialect's watched attributes or events, and decides from them
// alone, cheaply; when it can only say that the span may be a retrieval,
// confirm looks further, into the span itself (its events, the text of an
// attribute) — but only when no dialect before it claimed the span and no
// dialect took it for a model call.
type dialect interface {
	// id is the Dialect that Recognise reports for the spans it recognises.
	id() Dialect
	// watches are the attributes, and the span event names, that
	// classify, confirm and answer look at. The reader collects them for
	// every dialect in one pass over a span's attributes.
	watches() watchList
	// classify says what the span is in this convention. It must not
	// allocate and must cost the same whatever the size of the values.
	// It is called through classifyAs, not through this interface.
	classify(r *Reader, w *watched) class
	// confirm decides a span that classify found to be classMaybe. It runs
	// on few spans, and may look at any part of them.
	confirm(r *Reader, span ptrace.Span, w watched) bool
	// read takes the query, answer and reference from a span it
	// recognised, and its chunks when wantChunks, within the reader's
	// limits (Read checks the total).
	read(r *Reader, span ptrace.Span, wantChunks bool) (Retrieval, error)
	// answer is the text the watched attributes give as the trace's
	// answer, "" if none.
	answer(r *Reader, w watched) string
}

// class is what a dialect makes of a span from its watched attributes.
type class uint8

const (
	// classRetrieval: a retrieval span in this convention.
	classRetrieval class = 1 << iota
	// classMaybe: a retrieval span if confirm says so.
	classMaybe
	// classModelCall: a call to a model, which is not a retrieval but may
	// carry the trace's answer.
	classModelCall
)

// dialects in the order of docs/SOURCES.md's dialect table: the first that
// recognises a span wins.
var dialects = [numDialects]dialect{
	projectDialect{},
	genAIDialect{},
	openInferenceDialect{},
	openLLMetryDialect{},
	springAIDialect{},
}

// numDialects sizes the per-dialect state of a pass over a span, which
// lives on the stack; the compiler refuses more dialects than it says, and
// TestRegistry fewer. At most 8 (observation.present is a byte).
const numDialects = 5

// answerers are the dialects whose attributes can carry a trace's answer,
// in the order they are tried (trace_join in docs/SOURCES.md).
var answerers = [...]int{
	dialectIndex(DialectOpenInference),
	dialectIndex(DialectGenAI),
	dialectIndex(DialectOpenLLMetry),
}

// dialectIDs are the ids of dialects, by index.
var dialectIDs = func() (ids [numDialects]Dialect) {
	for i, dl := range dialects {
		ids[i] = dl.id()
	}
	return ids
}()

// dialectIndex is the index of dialect d in dialects, -1 if none.
func dialectIndex(d Dialect) int {
	for i, id := range dialectIDs {
		if id == d {
			return i
		}
	}
	return -1
}

// maxWatched is the most attributes, and the most event names, one dialect
// may watch.
const maxWatched = 3

type watchList struct {
	attributes []string
	events     []string
}

// watched is what the single pass found of one dialect's watchList: the
// value of each watched attribute that the span has (its first, as
// pcommon.Map.Get would find), and which watched events it has. Through
// the dialect interface (confirm, answer) it is passed by value, since a
// pointer passed through an interface escapes and recognising a span would
// allocate; it has at most four fields, so that the compiler passes it in
// registers. classify, on every span with a watched attribute, takes a
// pointer in a direct call (classifyAs).
type watched struct {
	a0, a1, a2 pcommon.Value
	// marks: bit i is set when the span has attribute i, bit 8+i when it
	// has an event named events[i].
	marks uint16
}

// value is attribute i of the watch list.
func (w *watched) value(i int) (pcommon.Value, bool) {
	if w.marks&(1<<i) == 0 {
		return pcommon.Value{}, false
	}
	switch i {
	case 0:
		return w.a0, true
	case 1:
		return w.a1, true
	}
	return w.a2, true
}

// str is attribute i when it is a string, else "": a number where text is
// expected is not text.
func (w *watched) str(i int) string {
	if v, ok := w.value(i); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func (w *watched) event(i int) bool { return w.marks&(1<<(8+i)) != 0 }

// set records attribute i, unless an attribute of the same key came first.
func (w *watched) set(i uint8, v pcommon.Value) {
	if w.marks&(1<<i) != 0 {
		return
	}
	w.marks |= 1 << i
	switch i {
	case 0:
		w.a0 = v
	case 1:
		w.a1 = v
	default:
		w.a2 = v
	}
}

// observation is what one pass over a span's attributes found.
type observation struct {
	watched [numDialects]watched
	// present: bit d is set when dialect d has a watched attribute or
	// event.
	present uint8
	// scored: the span carries a status from a collector upstream.
	scored bool
	// chunks: the span carries the configured chunks attribute.
	chunks bool
	// answer is the configured answer attribute, when hasAnswer.
	answer    pcommon.Value
	hasAnswer bool
}

// answerText is the configured answer attribute, if the span has it as a
// string.
func (obs *observation) answerText() string {
	if obs.hasAnswer && obs.answer.Type() == pcommon.ValueTypeStr {
		return obs.answer.Str()
	}
	return ""
}

// keyTable finds, for an attribute key, what the single pass must note of
// it. Keys are bucketed by length, and a bit per length says whether a
// bucket is empty, so that most attributes of most spans cost one length
// test.
type keyTable struct {
	lengths uint64 // bit n: a key of length n (< 64) is watched
	short   [64][]keyEntry
	long    []keyEntry
	events  [numDialects][]string
	// watchesEvents: some dialect watches events, eventNames of them.
	watchesEvents bool
	eventNames    int
}

type keyEntry struct {
	key string
	// words cover the key, for keys of 8 to 32 bytes (see keyWords).
	words [4]uint64
	role  keyRole
	// dialect watches the attribute, as the index-th of its watch list.
	dialect, index uint8
}

type keyRole uint8

const (
	roleWatched keyRole = iota
	roleStatus
	roleChunks
	roleAnswer
)

func newKeyTable(keys Keys) keyTable {
	var t keyTable
	for d, dl := range dialects {
		w := dl.watches()
		if len(w.attributes) > maxWatched || len(w.events) > maxWatched {
			panic("spanreader: " + string(dl.id()) + " watches more than maxWatched attributes or events")
		}
		for i, k := range w.attributes {
			t.add(keyEntry{key: k, role: roleWatched, dialect: uint8(d), index: uint8(i)})
		}
		t.events[d] = w.events
		t.watchesEvents = t.watchesEvents || len(w.events) > 0
		t.eventNames += len(w.events)
	}
	t.add(keyEntry{key: keyScoreStatus, role: roleStatus})
	if keys.Chunks != "" {
		t.add(keyEntry{key: keys.Chunks, role: roleChunks})
	}
	if keys.Answer != "" {
		t.add(keyEntry{key: keys.Answer, role: roleAnswer})
	}
	return t
}

func (t *keyTable) add(e keyEntry) {
	if n := len(e.key); n >= 8 && n <= 32 {
		e.words = keyWords(e.key)
	}
	if n := len(e.key); n < len(t.short) {
		t.lengths |= 1 << n
		t.short[n] = append(t.short[n], e)
		return
	}
	t.long = append(t.long, e)
}

// keyWords are four 8-byte words of a key of 8 to 32 bytes that, taken
// together (overlapping for shorter keys), cover all of it. Keys of a span
// are compared with the watched keys of the same length, and are mostly
// not them: comparing words inline is much cheaper than calling the
// runtime's comparison for each.
func keyWords(k string) [4]uint64 {
	n := len(k)
	return [4]uint64{load64(k, 0), load64(k, min(8, n-8)), load64(k, max(n-16, 0)), load64(k, n-8)}
}

// observe is the single pass over a span's attributes.
func (r *Reader) observe(span ptrace.Span, obs *observation) {
	t := &r.table
	// In a local, the bit set stays in a register: the loop writes to obs
	// through a pointer, after which t.lengths would be loaded again.
	lengths := t.lengths
	for k, v := range span.Attributes().All() {
		var bucket []keyEntry
		if n := len(k); n < len(t.short) {
			if lengths&(1<<n) == 0 {
				continue
			}
			bucket = t.short[n]
		} else {
			bucket = t.long
		}
		for i := range bucket {
			e := &bucket[i]
			// k == e.key, written out (see keyWords).
			if n := len(k); n < 8 || n > 32 || n != len(e.key) {
				if k != e.key {
					continue
				}
			} else if load64(k, 0) != e.words[0] || load64(k, n-8) != e.words[3] ||
				load64(k, min(8, n-8)) != e.words[1] || load64(k, max(n-16, 0)) != e.words[2] {
				continue
			}
			switch e.role {
			case roleWatched:
				obs.watched[e.dialect].set(e.index, v)
				obs.present |= 1 << e.dialect
			case roleAnswer:
				if !obs.hasAnswer {
					obs.answer, obs.hasAnswer = v, true
				}
			case roleStatus:
				obs.scored = true
			case roleChunks:
				obs.chunks = true
			}
		}
	}
}

// classify asks each dialect that has watched attributes or events on the
// span what the span is, and returns all the answers together.
func (r *Reader) classify(span ptrace.Span, obs *observation) class {
	if events := span.Events(); r.table.watchesEvents && events.Len() > 0 {
		r.observeEvents(events, obs)
	}
	var all class
	for present := obs.present; present != 0; present &= present - 1 {
		d := bits.TrailingZeros8(present)
		all |= classifyAs(r, d, &obs.watched[d])
	}
	return all
}

// observeEvents notes which watched events a span has, in a pass over its
// events. Its callers call it only when the span has events and some
// dialect watches them (which costs nothing when it does not).
// It stops once it has seen every watched name.
func (r *Reader) observeEvents(events ptrace.SpanEventSlice, obs *observation) {
	unseen := r.table.eventNames
	for i := 0; i < events.Len() && unseen > 0; i++ {
		name := events.At(i).Name()
		for d, names := range r.table.events {
			for j, want := range names {
				if bit := uint16(1) << (8 + j); name == want && obs.watched[d].marks&bit == 0 {
					obs.watched[d].marks |= bit
					obs.present |= 1 << d
					unseen--
				}
			}
		}
	}
}

// classifyAs is dialects[d].classify, called directly, which costs less
// than the call through the interface on every span with a watched
// attribute: a pointer passed through an interface escapes (the
// observation would move to the heap), and watched passed by value is
// copied through memory (about 2.5 ns of the 32 such a span costs,
// BenchmarkPassThrough). A dialect without its case here panics on its
// first span (TestRegistry).
func classifyAs(r *Reader, d int, w *watched) class {
	switch dl := dialects[d].(type) {
	case projectDialect:
		return dl.classify(r, w)
	case genAIDialect:
		return dl.classify(r, w)
	case openInferenceDialect:
		return dl.classify(r, w)
	case openLLMetryDialect:
		return dl.classify(r, w)
	case springAIDialect:
		return dl.classify(r, w)
	}
	panic("spanreader: classifyAs has no case for " + string(dialects[d].id()))
}

// dialectOf is the first dialect that recognises the observed span, -1 if
// none does. Dialects are asked in order (bits of present, lowest first);
// those that can only say maybe are asked to confirm when no dialect before
// them said yes and no dialect took the span for a model call.
func (r *Reader) dialectOf(span ptrace.Span, obs *observation) int {
	if events := span.Events(); r.table.watchesEvents && events.Len() > 0 {
		r.observeEvents(events, obs)
	}
	first := -1     // the first dialect that said yes
	var maybe uint8 // the dialects that said maybe
	var all class
	for present := obs.present; present != 0; present &= present - 1 {
		d := bits.TrailingZeros8(present)
		c := classifyAs(r, d, &obs.watched[d])
		all |= c
		switch {
		case c&classRetrieval != 0:
			if first < 0 {
				first = d
			}
		case c&classMaybe != 0:
			maybe |= 1 << d
		}
	}
	if all&classModelCall != 0 {
		return first
	}
	for ; maybe != 0; maybe &= maybe - 1 {
		d := bits.TrailingZeros8(maybe)
		if first >= 0 && first < d {
			break
		}
		if dialects[d].confirm(r, span, obs.watched[d]) {
			return d
		}
	}
	return first
}
