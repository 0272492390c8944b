package lexical

// chunkInfo is what one pass over a chunk yields, besides the terms and names
// it has (kept in the caller's bit sets, see scan).
type chunkInfo struct {
	subject float64 // share of the subject's content words in the query or reference
	// subjectWords is how many words the chunk's subject spans from its
	// start, stop words included; 0 when it has no content word. Its text is
	// only built for a reason that quotes it.
	subjectWords int
	answer       bool // the reference phrase occurs in the chunk
}

// leadWord is what the subject needs to know of one of a chunk's first words.
type leadWord struct {
	upper, stop, brk bool
	term             bool // the word's stem is a term
}

// scanBuffers are reused from chunk to chunk: a chunk's words are not
// needed once it is scanned.
type scanBuffers struct {
	lower  []byte  // the current word, lower-cased
	seq    []int32 // the chunk's content words as term indices (-1: not a term)
	phrase []int32 // all the chunk's words as reference phrase positions (-1: none)
}

// scan reads one chunk, word by word, without keeping the words: each is
// lower-cased into a buffer, hashed once, and looked up among the stop words,
// the reference phrase's words and the terms (by its stem). It sets has's bit
// t for every term t the chunk contains, and names[k] to 1 when the chunk
// contains query name k, 2 when it does so in its lead.
func (r *Prepared) scan(chunk string, buf *scanBuffers, has []uint64, names []int8) chunkInfo {
	text := cut(chunk, r.params.chunkRunes())
	lower, seq, all := buf.lower, buf.seq[:0], buf.phrase[:0]
	wantPhrase := len(r.phrase) > 0
	// The subject is read from the first maxNameWords words, plus one to
	// see whether a stop word is followed by a capitalised word.
	var lead [maxNameWords + 1]leadWord
	nLead := 0
	words := wordReader{s: text}
	for {
		start, end, brk, ascii := words.next()
		if start < 0 {
			break
		}
		raw := text[start:end]
		hash := lowerHash(&lower, text, start, end, ascii)
		stop := isStopWord(lower, hash)
		// The word itself is looked up for the phrase, and as its own stem
		// when stemming leaves it unchanged, as it does most words.
		n, y := stemLen(lower)
		stemmed := n < len(lower) || y
		var whole *wordSlot
		if wantPhrase || !stop && !stemmed {
			whole = r.table.findBytes(hash, lower)
		}
		if wantPhrase {
			pos := int32(-1)
			if whole != nil {
				pos = whole.phrase
			}
			all = append(all, pos)
		}
		term := int32(-1)
		if !stop {
			s := whole
			if stemmed {
				// The stem is a prefix of the word, plus "y" in place of
				// "ies": lower can be cut to it.
				if lower = lower[:n]; y {
					lower = append(lower, 'y')
				}
				s = r.table.findBytes(hashWord(lower), lower)
			}
			if s != nil && s.term >= 0 {
				term = s.term
				has[term>>6] |= 1 << (term & 63)
			}
			seq = append(seq, term)
		}
		if nLead < len(lead) {
			lead[nLead] = leadWord{upper: startsUpper(raw, ascii), stop: stop, brk: brk, term: term >= 0}
			nLead++
		}
	}
	buf.lower, buf.seq, buf.phrase = lower, seq, all

	for k, nm := range r.names {
		switch pos := index(seq, nm.terms); {
		case pos < 0:
		case pos < r.params.LeadWords:
			names[k] = 2
		default:
			names[k] = 1
		}
	}
	var f chunkInfo
	f.subject, f.subjectWords = subjectNamed(lead[:nLead])
	f.answer = wantPhrase && index(all, r.phrase) >= 0
	return f
}

// subjectNamed finds the chunk's subject, the run of capitalised words it
// opens with, and returns the share of the subject's content words that the
// query or the reference name, and how many words the subject spans. A
// chunk about the answer itself ("Paris is the capital…" for "The capital of
// France is Paris.") counts as much as one about a name the question asks
// after.
func subjectNamed(lead []leadWord) (float64, int) {
	var content, found, end int
	for i, t := range lead {
		if i > 0 && t.brk || i == maxNameWords {
			break
		}
		inner := t.stop && i+1 < len(lead) && lead[i+1].upper && !lead[i+1].brk
		if !t.upper && !inner {
			break
		}
		end = i + 1
		if t.stop {
			continue
		}
		content++
		if t.term {
			found++
		}
	}
	if content == 0 {
		return 0, 0
	}
	return float64(found) / float64(content), end
}

// subjectText appends the first n words of the chunk (as scan read it),
// separated by single spaces, to b.
func (r *Prepared) subjectText(b []byte, chunk string, n int) []byte {
	words := wordReader{s: cut(chunk, r.params.chunkRunes())}
	for i := 0; i < n; i++ {
		start, end, _, _ := words.next()
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words.s[start:end]...)
	}
	return b
}

// index returns the first position of want in seq, or -1.
func index(seq, want []int32) int {
	if len(want) == 0 {
		return 0
	}
	first := want[0]
outer:
	for i := 0; i+len(want) <= len(seq); i++ {
		if seq[i] != first {
			continue
		}
		for j, w := range want[1:] {
			if seq[i+1+j] != w {
				continue outer
			}
		}
		return i
	}
	return -1
}
