package ragprecisionprocessor

import (
	"github.com/ragprecision/ragprecision/internal/spanreader"
	"github.com/ragprecision/ragprecision/judge"
)

// rerankInput is where a rerank span's input ranking finds its verdicts.
// The input is judged in the same request as the output: its documents
// follow the output's chunks, and only those that are not among them, so
// that a document the reranker returned is judged once for both rankings
// and the input costs no judge request beyond its own documents (README,
// "Rerankers"; docs/OPERATING.md, "Does my reranker help").
type rerankInput struct {
	// at[i] is the index, among the request's verdicts, of the verdict of
	// the input's i-th document.
	at []int
	// extra is how many chunks the request has beyond the output's.
	extra int
}

// judgedChunks is the chunks to judge for ret: its output ranking, then
// the documents of its input ranking that the output does not have; and
// where the input's verdicts are, nil when ret has no input ranking.
func judgedChunks(ret *spanreader.Retrieval) ([]string, *rerankInput) {
	if ret.RerankInput == nil {
		return ret.Chunks, nil
	}
	first := make(map[string]int, len(ret.Chunks)+len(ret.RerankInput))
	for i, c := range ret.Chunks {
		if _, ok := first[c]; !ok {
			first[c] = i
		}
	}
	// A full slice expression: appending copies, never writing into the
	// retrieval's own array.
	chunks := ret.Chunks[:len(ret.Chunks):len(ret.Chunks)]
	in := &rerankInput{at: make([]int, len(ret.RerankInput))}
	for i, c := range ret.RerankInput {
		j, ok := first[c]
		if !ok {
			j = len(chunks)
			first[c] = j
			chunks = append(chunks, c)
		}
		in.at[i] = j
	}
	in.extra = len(chunks) - len(ret.Chunks)
	return chunks, in
}

// verdicts is the input ranking's verdicts, in its order, from the
// verdicts of the whole request.
func (in *rerankInput) verdicts(all []judge.Verdict) []bool {
	vs := make([]bool, len(in.at))
	for i, j := range in.at {
		vs[i] = all[j].Relevant
	}
	return vs
}
