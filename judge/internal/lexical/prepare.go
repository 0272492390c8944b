package lexical

import (
	"sync"
	"unicode/utf8"
)

// Prepared is a query and a reference analysed once (their terms, the
// query's names, the reference phrase), for judging any number of
// retrievals against them: Judge(query, reference, chunks) is
// Prepare(query, reference).Judge(chunks), and a caller that judges several
// retrievals for the same question saves the analysis on all but the first.
// A Prepared is immutable and safe for concurrent use.
type Prepared struct {
	params Params
	// table holds the terms (stems of the query's and the reference's
	// content words, indexed in order of first appearance, query first, so
	// that nothing depends on hashing) and the reference phrase's words.
	table wordTable
	// filter holds the prefixes of the table's words, for the chunk
	// scanner to skip most words without looking them up.
	filter prefixFilter
	nQuery int // terms [0, nQuery) are the query's
	nTerms int
	names  []name
	terms  []int32 // the names' terms, one after the other
	// phrase is the reference's words, for containment, as positions among
	// its distinct words (wordSlot.phrase); empty if none.
	phrase []int32
	// quoted holds the names as quoted in reasons, one after the other,
	// then the reference from refQuoted on when it has terms the query
	// lacks (refQuoted is -1 when it has none).
	quoted    []byte
	refQuoted int
}

// name is a run of capitalised words in the query.
type name struct {
	terms []int32 // term indices
	// quoted is where the name, as written and quoted, is in
	// Prepared.quoted, for reasons.
	quoted [2]int
}

// refText is the reference as quoted in reasons.
func (r *Prepared) refText() []byte {
	if r.refQuoted < 0 {
		return nil
	}
	return r.quoted[r.refQuoted:]
}

// nameText is name k as quoted in reasons.
func (r *Prepared) nameText(k int) []byte {
	q := r.names[k].quoted
	return r.quoted[q[0]:q[1]]
}

// prepareBuffers are Prepare's working buffers, recycled through a pool:
// only what a Prepared keeps is allocated for it.
type prepareBuffers struct {
	query, reference tokenizer
	nameEnds         []int    // where each name's terms end in Prepared.terms
	quotedEnds       []int    // where each name ends in Prepared.quoted
	words            []string // the words of the name being read
	termOf           []int32  // the term of each of the query's content words
}

var prepareBufferPool = sync.Pool{New: func() any { return new(prepareBuffers) }}

// Prepare analyses the query and the reference for p.
func (p Params) Prepare(query, reference string) *Prepared {
	r := new(Prepared)
	p.prepare(r, query, reference)
	return r
}

// preparedPool recycles the Prepared values of Params.Judge, which needs
// one only while it judges: the verdicts keep nothing of it.
var preparedPool = sync.Pool{New: func() any { return new(Prepared) }}

// maxPooledTable is the largest table of a Prepared put back in the pool.
const maxPooledTable = 1 << 10

// prepare analyses the query and the reference for p into r, reusing the
// arrays r holds from an earlier analysis.
func (p Params) prepare(r *Prepared, query, reference string) {
	b := prepareBufferPool.Get().(*prepareBuffers)
	defer func() {
		if cap(b.query.toks)+cap(b.reference.toks) <= maxPooledWords {
			prepareBufferPool.Put(b)
		}
	}()
	qt := b.query.tokenize(query, MaxQueryRunes)
	rt := b.reference.tokenize(reference, MaxQueryRunes)
	// The table holds the stems of the content words and the reference
	// phrase's words.
	keys := len(rt)
	for _, toks := range [2][]token{qt, rt} {
		for _, t := range toks {
			if !t.stop {
				keys++
			}
		}
	}
	r.params = p
	r.table.reset(keys)
	r.filter = prefixFilter{}
	r.nQuery, r.nTerms = 0, 0
	r.phrase, r.quoted, r.refQuoted = r.phrase[:0], r.quoted[:0], -1
	if r.terms == nil {
		// A new Prepared: its arrays are made once, at their largest.
		r.terms = make([]int32, 0, len(qt))
		r.phrase = make([]int32, 0, len(rt))
		// Only the first MaxQueryRunes runes of each are read.
		const maxRead = MaxQueryRunes * utf8.UTFMax
		r.quoted = make([]byte, 0, min(len(query), maxRead)+min(len(reference), maxRead)+2*maxNames+2)
		// The table's words are the tokens' words and stems.
		r.table.keys = make([]byte, 0, len(b.query.lower)+len(b.reference.lower))
	}
	// termOf, when not nil, gets each content word's term, for readNames
	// not to look the query's up again.
	add := func(z *tokenizer, termOf []int32) {
		for i := range z.toks {
			if t := &z.toks[i]; !t.stop {
				st := z.stem(t)
				s := r.table.insert(hashWord(st), st)
				if s.term < 0 {
					s.term = int32(r.nTerms)
					r.nTerms++
				}
				if termOf != nil {
					termOf[i] = s.term
				}
			}
		}
	}
	b.termOf = resize(b.termOf, len(qt))
	add(&b.query, b.termOf)
	r.nQuery = r.nTerms
	add(&b.reference, nil)
	r.readNames(query, &b.query, b)

	// Only a reference with terms the query lacks is looked for as a
	// phrase: "yes", or one of the names a comparison question offers,
	// would match chunks for what the query says, not for the answer.
	if r.nTerms > r.nQuery {
		// The phrase is the reference's words without leading and trailing
		// stop words: "the North Atlantic Conference" is found in "… known
		// as North Atlantic Conference".
		lo, hi := 0, len(rt)
		for lo < hi && rt[lo].stop {
			lo++
		}
		for hi > lo && rt[hi-1].stop {
			hi--
		}
		if hi-lo <= maxPhraseWords {
			distinct := int32(0)
			for i := range rt[lo:hi] {
				w := b.reference.word(&rt[lo+i])
				s := r.table.insert(hashWord(w), w)
				if s.phrase < 0 {
					s.phrase = distinct
					distinct++
				}
				r.phrase = append(r.phrase, s.phrase)
			}
		}
		r.refQuoted = len(r.quoted)
		r.quoted = appendQuoteFields(r.quoted, reference)
	}
	for i := range r.table.slots {
		if s := &r.table.slots[i]; s.n > 0 {
			r.filter.add(r.table.key(s))
		}
	}

	start, termStart := 0, 0
	for k := range r.names {
		r.names[k].quoted = [2]int{start, b.quotedEnds[k]}
		r.names[k].terms = r.terms[termStart:b.nameEnds[k]:b.nameEnds[k]]
		start, termStart = b.quotedEnds[k], b.nameEnds[k]
	}
}

// pooled reports whether r is small enough to be kept in preparedPool.
func (r *Prepared) pooled() bool {
	return len(r.table.slots) <= maxPooledTable && cap(r.quoted) <= maxPooledWords && cap(r.table.keys) <= maxPooledWords
}

// readNames finds the names in the query: runs of capitalised words, with
// lower-case function words allowed inside ("Kiss and Tell", "Band of
// Skulls"), except "and" and "or", which more often join two names ("Annie
// Morton or Terry Richardson"). Runs stop at punctuation. The query's
// tokens are z's, read from query, and b.termOf holds their terms. It sets
// r.names to as many names, with neither terms nor text, and leaves their
// terms in r.terms and their quoted texts in r.quoted, where they end in
// b.nameEnds and b.quotedEnds.
func (r *Prepared) readNames(query string, z *tokenizer, b *prepareBuffers) {
	qt := z.toks
	r.terms, b.nameEnds, b.quotedEnds, b.words = r.terms[:0], b.nameEnds[:0], b.quotedEnds[:0], b.words[:0]
	nameStart := 0
	flush := func() {
		if len(r.terms) > nameStart && len(b.nameEnds) < maxNames {
			b.nameEnds = append(b.nameEnds, len(r.terms))
			r.quoted = appendQuote(r.quoted, b.words)
			b.quotedEnds = append(b.quotedEnds, len(r.quoted))
			nameStart = len(r.terms)
		}
		r.terms, b.words = r.terms[:nameStart], b.words[:0]
	}
	for i := range qt {
		t := &qt[i]
		if t.brk || len(r.terms)-nameStart == maxNameWords {
			flush()
		}
		switch {
		case t.upper && !t.stop:
			r.terms = append(r.terms, b.termOf[i])
			b.words = append(b.words, t.rawIn(query))
		case len(r.terms) > nameStart && t.stop && !t.upper && string(z.word(t)) != "and" && string(z.word(t)) != "or" &&
			i+1 < len(qt) && qt[i+1].upper && !qt[i+1].brk:
			b.words = append(b.words, t.rawIn(query))
		default:
			flush()
		}
	}
	flush()
	r.names = resize(r.names, len(b.nameEnds))
}
