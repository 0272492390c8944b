package lexical

import (
	"sync"
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
	// phrase is the reference's words, for containment, as positions among
	// its distinct words (wordSlot.phrase); nil if none.
	phrase  []int32
	refText string // the reference as quoted in reasons
}

// name is a run of capitalised words in the query.
type name struct {
	terms  []int32 // term indices
	quoted string  // as written and quoted, for reasons
}

// prepareBuffers are Prepare's working buffers, recycled through a pool:
// only what a Prepared keeps is allocated for it.
type prepareBuffers struct {
	query, reference tokenizer
	terms            []int32  // the names' terms, one after the other
	nameEnds         []int    // where each name's terms end in terms
	quoted           []byte   // the names and the reference, quoted
	quotedEnds       []int    // where each ends in quoted
	words            []string // the words of the name being read
}

var prepareBufferPool = sync.Pool{New: func() any { return new(prepareBuffers) }}

// Prepare analyses the query and the reference for p.
func (p Params) Prepare(query, reference string) *Prepared {
	b := prepareBufferPool.Get().(*prepareBuffers)
	defer func() {
		if cap(b.query.toks)+cap(b.reference.toks) <= maxPooledWords {
			prepareBufferPool.Put(b)
		}
	}()
	qt := b.query.tokenize(query, MaxQueryRunes)
	rt := b.reference.tokenize(reference, MaxQueryRunes)
	r := &Prepared{params: p, table: newWordTable(len(qt) + 2*len(rt))}
	add := func(toks []token) {
		for _, t := range toks {
			if t.stop {
				continue
			}
			if s := r.table.insert(hashWord(t.stem), t.stem); s.term < 0 {
				s.term = int32(r.nTerms)
				r.nTerms++
			}
		}
	}
	add(qt)
	r.nQuery = r.nTerms
	add(rt)
	b.quoted, b.quotedEnds = b.quoted[:0], b.quotedEnds[:0]
	r.readNames(qt, b)

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
			r.phrase = make([]int32, 0, hi-lo)
			distinct := int32(0)
			for _, t := range rt[lo:hi] {
				s := r.table.insert(hashWord(t.word), t.word)
				if s.phrase < 0 {
					s.phrase = distinct
					distinct++
				}
				r.phrase = append(r.phrase, s.phrase)
			}
		}
		b.quoted = appendQuoteFields(b.quoted, reference)
		b.quotedEnds = append(b.quotedEnds, len(b.quoted))
	}

	for i := range r.table.slots {
		if key := r.table.slots[i].key; key != "" {
			r.filter.add(key)
		}
	}

	// The quoted texts share one string, and the names' terms one array.
	quoted := string(b.quoted)
	terms := append([]int32(nil), b.terms...)
	start, termStart := 0, 0
	for k := range r.names {
		r.names[k].quoted = quoted[start:b.quotedEnds[k]]
		r.names[k].terms = terms[termStart:b.nameEnds[k]:b.nameEnds[k]]
		start, termStart = b.quotedEnds[k], b.nameEnds[k]
	}
	if r.nTerms > r.nQuery {
		r.refText = quoted[start:]
	}
	return r
}

// term returns the index of the term with stem st, or -1.
func (r *Prepared) term(st string) int32 {
	if s := r.table.find(hashWord(st), st); s != nil {
		return s.term
	}
	return -1
}

// readNames finds the names in the query: runs of capitalised words, with
// lower-case function words allowed inside ("Kiss and Tell", "Band of
// Skulls"), except "and" and "or", which more often join two names ("Annie
// Morton or Terry Richardson"). Runs stop at punctuation. It sets r.names
// to as many names, with neither terms nor text, and leaves their terms in
// b.terms and their quoted texts in b.quoted.
func (r *Prepared) readNames(qt []token, b *prepareBuffers) {
	b.terms, b.nameEnds, b.words = b.terms[:0], b.nameEnds[:0], b.words[:0]
	nameStart := 0
	flush := func() {
		if len(b.terms) > nameStart && len(b.nameEnds) < maxNames {
			b.nameEnds = append(b.nameEnds, len(b.terms))
			b.quoted = appendQuote(b.quoted, b.words)
			b.quotedEnds = append(b.quotedEnds, len(b.quoted))
			nameStart = len(b.terms)
		}
		b.terms, b.words = b.terms[:nameStart], b.words[:0]
	}
	for i, t := range qt {
		if t.brk || len(b.terms)-nameStart == maxNameWords {
			flush()
		}
		switch {
		case t.upper && !t.stop:
			b.terms = append(b.terms, r.term(t.stem))
			b.words = append(b.words, t.raw)
		case len(b.terms) > nameStart && t.stop && !t.upper && t.word != "and" && t.word != "or" &&
			i+1 < len(qt) && qt[i+1].upper && !qt[i+1].brk:
			b.words = append(b.words, t.raw)
		default:
			flush()
		}
	}
	flush()
	r.names = make([]name, len(b.nameEnds))
}
