package lexical

import (
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// appendReason appends the one sentence that explains a verdict to b. The
// sentences are those fmt would print (the frozen reference's reason, in
// reference_test.go, holds the formats), assembled by appending: a reason
// per chunk is on the judge's hot path.
func (r *Prepared) appendReason(b []byte, chunk string, f *chunkInfo, s *signals, rel bool, ev, score, cut float64) []byte {
	p := &r.params
	if !rel && ev < p.MinEvidence {
		b = append(b, "low overlap with query and answer (evidence "...)
		b = appendFixed(b, ev, 2)
		b = append(b, " < "...)
		b = appendFixed(b, p.MinEvidence, 2)
		return append(b, ')')
	}
	switch {
	case f.answer:
		b = append(b, "contains the answer "...)
		b = append(b, r.refText()...)
	case s.subject == 1:
		b = append(b, "is about "...)
		b = r.appendSubject(b, chunk, f)
		b = append(b, ", named in the query or answer"...)
	case s.subject >= p.MinEvidence:
		b = append(b, "is about "...)
		b = r.appendSubject(b, chunk, f)
		b = append(b, ", partly named in the query or answer"...)
	case s.bestName >= 0:
		b = append(b, "shares "...)
		b = append(b, r.nameText(s.bestName)...)
		b = append(b, " with the query"...)
	case s.answerTerms >= p.MinEvidence:
		b = append(b, "has "...)
		b = appendFixed(b, 100*s.answerTerms, 0)
		b = append(b, "% of the answer's terms"...)
	case s.queryTerms > 0:
		b = append(b, "has "...)
		b = appendFixed(b, 100*s.queryTerms, 0)
		b = append(b, "% of the query's terms"...)
	default:
		b = append(b, "has no term of the query or the answer"...)
	}
	if rel {
		return b
	}
	b = append(b, " but other chunks match better (score "...)
	b = appendFixed(b, score, 2)
	b = append(b, " < "...)
	b = appendFixed(b, cut, 2)
	return append(b, ')')
}

// appendSubject appends the chunk's subject, quoted as appendQuote does.
func (r *Prepared) appendSubject(b []byte, chunk string, f *chunkInfo) []byte {
	b = append(b, '"')
	start := len(b)
	b = r.subjectText(b, chunk, f.subjectWords)
	// The subject's words are valid UTF-8 (invalid bytes end words), so
	// there is nothing to repair.
	return append(shorten(b, start), '"')
}

// appendFixed appends v with prec decimals, as fmt's %.<prec>f does.
func appendFixed(b []byte, v float64, prec int) []byte {
	// The scores, shares and confidences of reasons are small and not
	// negative: they are printed from v·100 (or v) rounded to an integer,
	// which strconv would take several times as long to do. That rounds v
	// itself the same way unless v·100 is within its rounding error of
	// halfway between two integers, which is left to strconv (it rounds an
	// exact tie to even).
	if (prec == 2 || prec == 0) && !math.Signbit(v) && v < 1e6 {
		x := v
		if prec == 2 {
			x *= 100
		}
		if d := x - math.Floor(x); d < 0.5-1e-6 || d > 0.5+1e-6 {
			n := uint64(math.Floor(x + 0.5))
			if prec == 0 {
				return strconv.AppendUint(b, n, 10)
			}
			b = strconv.AppendUint(b, n/100, 10)
			return append(b, '.', byte('0'+n/10%10), byte('0'+n%10))
		}
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Appendf(b, "%.*f", prec, v) // "+Inf": fmt's spelling, not strconv's
	}
	return strconv.AppendFloat(b, v, 'f', prec, 64)
}

// appendQuote appends the words, separated by single spaces, in double
// quotes, shortened to maxQuotedRunes runes, with each run of invalid UTF-8
// replaced by U+FFFD so that reasons are always valid text.
func appendQuote(b []byte, words []string) []byte {
	b = append(b, '"')
	start := len(b)
	for i, w := range words {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendValidUTF8(b, w)
	}
	return append(shorten(b, start), '"')
}

// appendQuoteFields is appendQuote(b, strings.Fields(s)). It stops reading s
// once the quote is long enough to be shortened: a reference of megabytes
// costs no more than one of a line.
func appendQuoteFields(b []byte, s string) []byte {
	b = append(b, '"')
	start := len(b)
	// More bytes than this hold more than maxQuotedRunes runes, whatever
	// the text: shorten cuts there anyway.
	const enough = 4*maxQuotedRunes + utf8.UTFMax
	field := -1 // where the field being read starts
	for i := 0; i <= len(s) && len(b)-start <= enough; {
		r, size := utf8.RuneError, 1
		if i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch space := i == len(s) || unicode.IsSpace(r); {
		case space && field >= 0:
			if len(b) > start {
				b = append(b, ' ')
			}
			b = appendValidUTF8(b, s[field:min(i, field+enough)])
			field = -1
		case !space && field < 0:
			field = i
		}
		i += size
	}
	return append(shorten(b, start), '"')
}

// appendValidUTF8 appends strings.ToValidUTF8(s, "\uFFFD") to b.
func appendValidUTF8(b []byte, s string) []byte {
	invalid := false // the previous byte was invalid
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			b = append(b, s[i])
			i, invalid = i+1, false
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 {
			if !invalid {
				b = append(b, "\uFFFD"...)
			}
			i, invalid = i+1, true
			continue
		}
		b = append(b, s[i:i+size]...)
		i, invalid = i+size, false
	}
	return b
}

// shorten cuts the text b[start:] to maxQuotedRunes runes, the last of them
// "…", if it is longer.
func shorten(b []byte, start int) []byte {
	if utf8.RuneCount(b[start:]) <= maxQuotedRunes {
		return b
	}
	end := start
	for range maxQuotedRunes - 1 {
		_, size := utf8.DecodeRune(b[end:])
		end += size
	}
	return append(b[:end], "…"...)
}
