package lexical

import (
	"math"
	"math/bits"
	"sync"
)

// signals are a chunk's signal values, plus what its reason needs.
type signals struct {
	query, answer, names, subject float64
	// Unweighted shares of query and answer terms, for the absolute floor:
	// IDF depends on the other chunks, evidence must not.
	queryTerms, answerTerms float64
	bestName                int // index of the rarest name found, or -1
}

// judgeBuffers hold a retrieval's working state, recycled through a pool so
// that judging a retrieval allocates little more than its verdicts.
type judgeBuffers struct {
	scan    scanBuffers
	infos   []chunkInfo
	has     []uint64 // chunk i's term bit set is has[i*words : (i+1)*words]
	names   []int8   // chunk i's name matches are names[i*len(r.names) : …]
	df      []int    // chunks containing each term
	nameDF  []int    // chunks containing each name
	idf     []float64
	nameIDF []float64
	dfIDF   []float64 // the IDF of each document frequency, 0 to n
	scores  []float64
	sigs    []signals
	reasons []byte // every verdict's reason, one after the other
	ends    []int  // where each reason ends in reasons
}

var judgeBufferPool = sync.Pool{New: func() any { return new(judgeBuffers) }}

// maxPooledWords is the largest scan buffer put back in the pool: a huge
// chunk's buffers are left to the garbage collector rather than kept.
const maxPooledWords = 1 << 16

// Judge decides the relevance of each chunk to the prepared query and
// reference, as Params.Judge does.
func (r *Prepared) Judge(chunks []string) []Verdict {
	out := make([]Verdict, len(chunks))
	r.judge(chunks, out, nil)
	return out
}

// judge sets out[i] to chunk i's verdict and, when decisions is not nil,
// decisions[i] to how it was reached.
func (r *Prepared) judge(chunks []string, out []Verdict, decisions []decision) {
	if len(chunks) == 0 {
		return
	}
	b := judgeBufferPool.Get().(*judgeBuffers)
	defer func() {
		if cap(b.scan.seq) <= maxPooledWords && cap(b.scan.phrase) <= maxPooledWords {
			judgeBufferPool.Put(b)
		}
	}()
	p := &r.params
	n := len(chunks)
	nNames := len(r.names)
	words := (r.nTerms + 63) / 64
	b.infos = resize(b.infos, n)
	b.has = resize(b.has, n*words)
	b.names = resize(b.names, n*nNames)
	b.df = resize(b.df, r.nTerms)
	b.nameDF = resize(b.nameDF, nNames)
	answerDF := 0 // chunks containing the reference phrase
	for i, c := range chunks {
		has, names := b.has[i*words:(i+1)*words], b.names[i*nNames:(i+1)*nNames]
		b.infos[i] = r.scan(c, &b.scan, has, names)
		forEachBit(has, func(t int) { b.df[t]++ })
		if b.infos[i].answer {
			answerDF++
		}
		for k, m := range names {
			if m > 0 {
				b.nameDF[k]++
			}
		}
	}

	nf := float64(n)
	// A document frequency is one of n+1 values: when there are fewer of
	// them than terms and names, each value's IDF is computed once.
	idfOf := func(df int) float64 { return inverseDF(nf, df) }
	if n+1 < r.nTerms+nNames {
		b.dfIDF = resize(b.dfIDF, n+1)
		for df := range b.dfIDF {
			b.dfIDF[df] = inverseDF(nf, df)
		}
		idfOf = func(df int) float64 { return b.dfIDF[df] }
	}
	b.idf = resize(b.idf, r.nTerms)
	var queryTotal, answerTotal float64
	for t := range b.idf {
		b.idf[t] = idfOf(b.df[t])
		if t < r.nQuery {
			queryTotal += b.idf[t]
		} else {
			answerTotal += b.idf[t]
		}
	}
	b.nameIDF = resize(b.nameIDF, nNames)
	var nameTotal float64
	for k := range b.nameIDF {
		b.nameIDF[k] = idfOf(b.nameDF[k])
		nameTotal += b.nameIDF[k]
	}

	b.scores = resize(b.scores, n)
	b.sigs = resize(b.sigs, n)
	for i, f := range b.infos {
		s := signals{bestName: -1}
		var qTerms, aTerms int
		// Terms in increasing order, as the sums were always formed: the
		// scores are then the same to the last bit.
		forEachBit(b.has[i*words:(i+1)*words], func(t int) {
			if t < r.nQuery {
				s.query += b.idf[t]
				qTerms++
			} else {
				s.answer += b.idf[t]
				aTerms++
			}
		})
		s.query = share(s.query, queryTotal)
		s.queryTerms = shareInt(qTerms, r.nQuery)
		s.answerTerms = shareInt(aTerms, r.nTerms-r.nQuery)
		if f.answer {
			s.answer = 1
		} else {
			s.answer = p.PartialAnswer * share(s.answer, answerTotal)
		}
		for k, m := range b.names[i*nNames : (i+1)*nNames] {
			if m > 0 {
				s.names += b.nameIDF[k] * float64(m) / 2
				if s.bestName < 0 || b.nameIDF[k] > b.nameIDF[s.bestName] {
					s.bestName = k
				}
			}
		}
		s.names = share(s.names, nameTotal)
		s.subject = f.subject
		b.scores[i] = p.QueryWeight*s.query + p.AnswerWeight*s.answer + p.NameWeight*s.names + p.SubjectWeight*s.subject
		b.sigs[i] = s
	}

	// A reference found in no more than half of the chunks tells them
	// apart, and a chunk that contains it is relevant whatever else it
	// holds. One found in most chunks ("1998" in a retrieval of 1998
	// albums) is left to the scores.
	answerDecides := 2*answerDF <= n
	spread := p.spread(b.scores)
	cut := spread.cut
	b.reasons, b.ends = b.reasons[:0], b.ends[:0]
	for i, s := range b.sigs {
		f := &b.infos[i]
		ev := max(s.queryTerms, s.answerTerms, s.subject)
		if f.answer {
			ev = 1
		}
		rel := b.scores[i] >= cut && ev >= p.MinEvidence || f.answer && answerDecides
		d := decision{relevant: rel, score: b.scores[i], evidence: ev}
		out[i].Relevant = rel
		out[i].Confidence = p.confidence(d, spread)
		b.reasons = r.appendReason(b.reasons, chunks[i], f, &s, rel, ev, b.scores[i], cut)
		b.reasons = appendConfidence(b.reasons, out[i].Confidence)
		b.ends = append(b.ends, len(b.reasons))
		if decisions != nil {
			decisions[i] = d
		}
	}
	// One string for all the reasons: one allocation instead of one each.
	all := string(b.reasons)
	start := 0
	for i, end := range b.ends {
		out[i].Reason = all[start:end]
		start = end
	}
}

// resize returns s with length n, zeroed, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// forEachBit calls f with the index of every set bit, in increasing order.
func forEachBit(set []uint64, f func(int)) {
	for w, word := range set {
		for word != 0 {
			f(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}

// spread is how a retrieval's scores are spread, and the cut it sets.
type spread struct {
	n                   int
	best, mean, sd, cut float64
}

// spread returns the scores' spread and the score a chunk needs, relative to
// the retrieval.
func (p *Params) spread(scores []float64) spread {
	var best, mean, sd float64
	for _, s := range scores {
		best = math.Max(best, s)
		mean += s
	}
	mean /= float64(len(scores))
	for _, s := range scores {
		sd += (s - mean) * (s - mean)
	}
	sd = math.Sqrt(sd / float64(len(scores)))
	return spread{n: len(scores), best: best, mean: mean, sd: sd, cut: math.Min(p.Alpha*best, mean+p.Beta*sd)}
}

// inverseDF is the smoothed inverse document frequency of a term found in
// df of n chunks; it is positive even when every chunk has the term.
func inverseDF(n float64, df int) float64 {
	return math.Log((n + 1) / (float64(df) + 0.5))
}

func share(part, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return part / total
}

func shareInt(part, total int) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}
