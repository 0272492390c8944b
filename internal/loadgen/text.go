package loadgen

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// corpus is the text chunks are cut from: a short guide to a made-up harbour
// town, written for this project, so that a lexical judge meets ordinary
// English (stop words, punctuation, numbers) rather than random letters.
const corpus = `Velmora is a harbour town on the northern coast, founded in 1362 by salt traders who needed a sheltered anchorage for the winter storms. ` +
	`The old quarter sits on a granite headland; its streets are narrow, steep and paved with grey setts brought from the quarry at Dunhollow. ` +
	`The lighthouse at the end of the east pier was rebuilt in 1889 after a fire, and its lamp can be seen twenty-two nautical miles out to sea. ` +
	`Ferries leave for the islands of Orm and Little Orm every morning at seven from April to October, and three times a week in winter. ` +
	`The crossing to Orm takes ninety minutes; tickets are sold at the harbour office, which opens an hour before the first departure. ` +
	`The town museum, in the former customs house, holds a collection of ship models, navigation instruments and the logbooks of the whaler Constance. ` +
	`Admission to the museum is free on the first Sunday of each month; on other days adults pay six euros and children under twelve enter free. ` +
	`Velmora's market is held on Saturdays in the square below the church of Saint Brendan, where fishermen sell the morning catch until noon. ` +
	`The town's best-known dish is a stew of mussels, leeks and cider, served with rye bread in most of the taverns along the quay. ` +
	`A coastal footpath runs west from the lighthouse to the cliffs at Harrow Point, a walk of eleven kilometres with views over the seal colony. ` +
	`The seals breed in late autumn, and the path above the colony is closed from the first of November to the middle of December. ` +
	`The nearest railway station is at Castlebridge, forty minutes away by the number 14 bus, which runs every hour from the bus stop beside the town hall. ` +
	`In August the town holds a regatta, with races for rowing gigs, dinghies and traditional sailing luggers, and fireworks over the harbour on the last night. ` +
	`The harbour master's office issues berths to visiting yachts; the inner basin dries at low water, so deep-keeled boats must moor in the outer harbour.`

// questions are asked of the corpus, each with the answer a RAG application
// would be expected to give: the reference the chunks are judged against.
var questions = []struct{ query, reference string }{
	{"When was the lighthouse at Velmora rebuilt?", "It was rebuilt in 1889 after a fire."},
	{"How long does the ferry crossing to Orm take?", "The crossing to Orm takes ninety minutes."},
	{"How much does the museum cost for adults?", "Adults pay six euros, except on the first Sunday of each month when admission is free."},
	{"Which bus goes to the railway station?", "The number 14 bus to Castlebridge, every hour from beside the town hall."},
	{"When is the coastal path above the seal colony closed?", "From the first of November to the middle of December, while the seals breed."},
	{"What is Velmora's best-known dish?", "A stew of mussels, leeks and cider served with rye bread."},
	{"Where can deep-keeled yachts moor?", "In the outer harbour, because the inner basin dries at low water."},
	{"On which day is the market held?", "On Saturdays, in the square below the church of Saint Brendan."},
}

// minChunkBytes leaves room for a chunk's unique tag and some text.
const minChunkBytes = 32

// texts cuts chunk bodies from the corpus and makes them unique.
type texts struct {
	bodies []string // each at least ChunkBytes long, starting at a word
	size   int
}

// bodyPool is how many chunk bodies each sender cuts: enough that chunks of
// one retrieval rarely share a body, few enough to build at once.
const bodyPool = 256

func newTexts(rng *rand.Rand, size int) *texts {
	words := strings.Fields(corpus)
	t := &texts{size: size}
	for range bodyPool {
		var b strings.Builder
		b.Grow(size + 16)
		for w := rng.IntN(len(words)); b.Len() < size; w = (w + 1) % len(words) {
			b.WriteString(words[w])
			b.WriteByte(' ')
		}
		t.bodies = append(t.bodies, b.String())
	}
	return t
}

// retrieval is what one retrieval span carries.
type retrieval struct {
	query, reference string
	chunks           []string
	ids              []string
}

// newRetrieval makes a retrieval no other span carries: its query and every
// chunk begin with a tag naming the sender, the retrieval's number and the
// chunk's rank, so that no verdict cache or de-duplication can answer it.
func (t *texts) newRetrieval(rng *rand.Rand, sender int, seq uint64, chunks int) retrieval {
	q := questions[rng.IntN(len(questions))]
	tag := "s" + strconv.Itoa(sender) + "-" + strconv.FormatUint(seq, 10)
	r := retrieval{
		query:     "[" + tag + "] " + q.query,
		reference: q.reference,
		chunks:    make([]string, chunks),
		ids:       make([]string, chunks),
	}
	for i := range chunks {
		id := tag + "-" + strconv.Itoa(i+1)
		var b strings.Builder
		b.Grow(t.size)
		b.WriteString("[doc ")
		b.WriteString(id)
		b.WriteString("] ")
		body := t.bodies[rng.IntN(len(t.bodies))]
		b.WriteString(body[:t.size-b.Len()])
		r.chunks[i] = b.String()
		r.ids[i] = id
	}
	return r
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// documentsJSON is the chunks as the GenAI conventions' document list:
// [{"id": "…", "content": "…"}, …].
func documentsJSON(r retrieval) string {
	n := 2
	for _, c := range r.chunks {
		n += len(c) + 32
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, c := range r.chunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, r.ids[i])
		b = append(b, `,"content":`...)
		b = appendJSONString(b, c)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}
