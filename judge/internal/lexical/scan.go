package lexical

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

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
	mask   wordMask
	lower  []byte    // the current word, lower-cased
	seq    []termHit // the chunk's content words that are terms
	phrase []hit     // the chunk's words that are reference phrase words
}

// termHit is a content word of a chunk whose stem is a term: its position
// among all the chunk's words, where it is in the chunk, and the term.
type termHit struct {
	word, start, end int
	term             int32
}

// hit is a word of a chunk that is a word of the reference phrase: its
// position among all the chunk's words and in the phrase's distinct words.
// The phrase is a run of such words, so the other words need not be kept
// to find it (see indexHits).
type hit struct {
	pos int
	val int32
}

// scan reads one chunk, word by word, without keeping the words. It sets
// has's bit t for every term t the chunk contains, and names[k] to 1 when
// the chunk contains query name k, 2 when it does so in its lead. Words are
// found in the chunk's wordMask; most are ruled out by their first three
// bytes (prefixFilter), counted, and never read to their end. Only the
// lead's words and those that pass are lower-cased, hashed, stemmed, looked
// up, and told from stop words by their first sixteen bytes (isStopBlock);
// docs/LEXICAL.md, "Cost", tells why.
func (r *Prepared) scan(chunk string, buf *scanBuffers, has []uint64, names []int8) chunkInfo {
	s := cut(chunk, r.params.chunkRunes())
	lower, seq, all := buf.lower, buf.seq[:0], buf.phrase[:0]
	wantPhrase := len(r.phrase) > 0
	wantSeq := len(r.names) > 0
	// The subject is read from the first maxNameWords words, plus one to
	// see whether a stop word is followed by a capitalised word.
	var lead [maxNameWords + 1]leadWord
	nLead := 0
	// Stop words matter to the subject, in the lead, and to names, which may
	// have stop words between their words ("Kiss and Tell"). A word is looked
	// up among them only until the lead and leadEnd (the first content word
	// past the first LeadWords) are settled, or when it passes the prefix
	// filter: names are found among the terms' hits (nameAt), and only the
	// words between two hits are read again.
	leadEnd := math.MaxInt
	counting := true
	if r.params.LeadWords <= 0 {
		leadEnd = 0
	}
	nWords, nContent := 0, 0
	nonASCII := buf.mask.build(s)
	wm := buf.mask.words
	prevEnd := 0 // where the last word read in full ends
	carry := uint64(0)
	for k, w := range wm {
		// The bits where words start in this block: set, and not after a
		// set bit.
		starts := w &^ (w<<1 | carry)
		carry = w >> 63
		for ; starts != 0; starts &= starts - 1 {
			start := k<<6 + bits.TrailingZeros64(starts)
			x0 := loadBlock8(s, start)
			if !counting {
				// Most words are told apart from the table's by the
				// prefix filter alone, their first three bytes read
				// from the block and the mask, without their end.
				word3 := w >> (uint(start) & 63)
				if start&63 > 61 && k+1 < len(wm) {
					word3 |= wm[k+1] << (64 - uint(start)&63)
				}
				n3 := bits.TrailingZeros64(^word3&7 | 8) // 1 to 3
				p := x0 & (1<<(8*n3) - 1)
				const high3 = 0x808080
				const lower3 = 0x202020
				if p&high3 == 0 && !r.filter.has(p|lower3&(1<<(8*n3)-1)) {
					nWords++
					continue
				}
			}
			// The word is read in full: where it ends.
			end := nextClear(wm, start)
			ascii := !nonASCII || buf.mask.high[start>>6]|buf.mask.high[(end-1)>>6] == 0 && end-start <= 64 || !anySet(buf.mask.high, start, end)
			brk := false
			if nLead < len(lead) {
				brk = separatorsBreak(s[prevEnd:start])
			}
			prevEnd = end

			// Its first eight lower-cased bytes, zero past its end, and, when
			// they are needed to tell a stop word, the next eight.
			var b0, b1 uint64
			n := end - start
			// An ASCII word's bytes are letters, digits, '.' and ',': setting
			// bit 5 of each lower-cases the letters and changes no other.
			const lowerBits = 0x20 * 0x0101010101010101
			if ascii {
				b0 = (x0 | lowerBits) & blockMask(n)
			} else {
				lower = appendLower(lower[:0], s[start:end], false)
				n = len(lower)
				b0, b1 = wordBlocks(lower)
			}
			pass := r.filter.has(b0)
			stop := false
			if counting || pass {
				if ascii && n > 8 && n <= maxStopWordLen {
					b1 = (loadBlock8(s, start+8) | lowerBits) & blockMask(n-8)
				}
				stop = isStopBlock(b0, b1, n)
			}
			if counting {
				if !stop {
					if nContent == r.params.LeadWords {
						leadEnd = nWords
					}
					nContent++
				}
				counting = nLead < len(lead)-1 || leadEnd == math.MaxInt
			}

			term, pos := int32(-1), int32(-1)
			if pass {
				var hash uint64
				if ascii {
					hash = lowerHash(&lower, s, start, end, true)
				} else {
					hash = hashWord(lower)
				}
				// The word itself is looked up for the phrase, and as its own
				// stem when stemming leaves it unchanged, as it does most
				// words.
				k, y := stemLen(lower)
				stemmed := k < len(lower) || y
				var whole *wordSlot
				if wantPhrase || !stop && !stemmed {
					whole = r.table.findBytes(hash, lower)
				}
				if whole != nil {
					pos = whole.phrase
				}
				if !stop {
					sl := whole
					if stemmed {
						// The stem is a prefix of the word, plus "y" in place
						// of "ies": lower can be cut to it.
						if lower = lower[:k]; y {
							lower = append(lower, 'y')
						}
						sl = r.table.findBytes(hashWord(lower), lower)
					}
					if sl != nil && sl.term >= 0 {
						term = sl.term
						has[term>>6] |= 1 << (term & 63)
					}
				}
			}
			if wantPhrase && pos >= 0 {
				all = append(all, hit{nWords, pos})
			}
			if wantSeq && term >= 0 { // a term is never a stop word
				seq = append(seq, termHit{word: nWords, start: start, end: end, term: term})
			}
			nWords++
			if nLead < len(lead) {
				lead[nLead] = leadWord{upper: startsUpper(s[start:end], ascii), stop: stop, brk: brk, term: term >= 0}
				nLead++
			}
		}
	}
	buf.lower, buf.seq, buf.phrase = lower, seq, all

	for k, nm := range r.names {
		switch h := r.nameAt(s, seq, nm.terms, &lower); {
		case h < 0:
		case seq[h].word < leadEnd:
			names[k] = 2
		default:
			names[k] = 1
		}
	}
	buf.lower = lower
	var f chunkInfo
	f.subject, f.subjectWords = subjectNamed(lead[:nLead])
	f.answer = wantPhrase && indexHits(all, r.phrase) >= 0
	return f
}

// separatorsBreak reports whether the separators between two words (or
// before the first) break names (see token.brk).
func separatorsBreak(sep string) bool {
	breaks := uint8(0)
	for i := 0; i < len(sep); {
		if c := asciiClass[sep[i]]; c != notASCII {
			// Outside a word, '.' and ',' are breaks.
			breaks |= c ^ asciiJoin
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(sep[i:])
		if r == utf8.RuneError || !unicode.IsSpace(r) && !isJoiner(r) {
			return true
		}
		i += size
	}
	return breaks != 0
}

// loadBlock8 returns the eight bytes of s from at (fewer at its end, zero
// above them) as a little-endian block.
func loadBlock8(s string, at int) uint64 {
	if at+8 <= len(s) {
		return binary.LittleEndian.Uint64([]byte(s[at : at+8]))
	}
	var x uint64
	for j := 0; at+j < len(s); j++ {
		x |= uint64(s[at+j]) << (8 * j)
	}
	return x
}

// blockMask keeps the first n bytes of a block, all of them when n >= 8.
func blockMask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}

// wordBlocks returns the first sixteen bytes of w as two little-endian
// blocks, zero past its end.
func wordBlocks(w []byte) (b0, b1 uint64) {
	for j := 0; j < len(w) && j < 16; j++ {
		if j < 8 {
			b0 |= uint64(w[j]) << (8 * j)
		} else {
			b1 |= uint64(w[j]) << (8 * (j - 8))
		}
	}
	return b0, b1
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

// nameAt returns the index in hits of the first of a run of content words
// of s whose terms are want, or -1; hits are the content words that are
// terms. Every value in want is a term, so a run is a run of hits with
// nothing between each two but stop words. lower is a buffer.
func (r *Prepared) nameAt(s string, hits []termHit, want []int32, lower *[]byte) int {
outer:
	for i := 0; i+len(want) <= len(hits); i++ {
		if hits[i].term != want[0] {
			continue
		}
		for j := 1; j < len(want); j++ {
			h, prev := &hits[i+j], &hits[i+j-1]
			if h.term != want[j] || h.word > prev.word+1 && !onlyStopWords(s[prev.end:h.start], lower) {
				continue outer
			}
		}
		return i
	}
	return -1
}

// onlyStopWords reports whether every word of the text between two words
// of a chunk is a stop word. lower is a buffer.
func onlyStopWords(between string, lower *[]byte) bool {
	words := wordReader{s: between}
	for {
		start, end, _, ascii := words.next()
		if start < 0 {
			return true
		}
		if !isStopWord(*lower, lowerHash(lower, between, start, end, ascii)) {
			return false
		}
	}
}

// indexHits returns the position of the first run of words that are want,
// or -1; hits are the words found in the table, in order. Every value in
// want is a term or a phrase position, never -1, so a run is a run of hits
// at consecutive positions.
func indexHits(hits []hit, want []int32) int {
	if len(want) == 0 {
		return 0
	}
	first := want[0]
outer:
	for i := 0; i+len(want) <= len(hits); i++ {
		h := hits[i]
		if h.val != first {
			continue
		}
		for j, w := range want[1:] {
			if g := hits[i+1+j]; g.val != w || g.pos != h.pos+1+j {
				continue outer
			}
		}
		return h.pos
	}
	return -1
}
