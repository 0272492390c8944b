package evalset

import (
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
)

// OnlySplit passes on the retrievals of split s (all of them for All).
func OnlySplit(src Source, s Split) Source {
	if s == All {
		return src
	}
	return sourceFunc(func() (Retrieval, error) {
		for {
			r, err := src.Next()
			if err != nil || s.Contains(r.HalfOf()) {
				return r, err
			}
		}
	})
}

// Limit passes on the first n retrievals of src; n <= 0 means all.
func Limit(src Source, n int) Source {
	if n <= 0 {
		return src
	}
	seen := 0
	return sourceFunc(func() (Retrieval, error) {
		if seen >= n {
			return Retrieval{}, io.EOF
		}
		seen++
		return src.Next()
	})
}

// SingleChunk turns a set into its single-chunk version: every retrieval
// becomes one retrieval of one of its chunks, alternately a relevant one and
// an irrelevant one (the 1st, 3rd, 5th… retrieval read contributes a
// relevant chunk, the others an irrelevant one), so that the truth is close
// to half relevant whatever the set's base rate. A retrieval with no chunk
// of the wanted kind contributes one of the other kind. Among the chunks of
// the wanted kind the one taken is chosen by a hash of the retrieval's ID,
// so the choice is deterministic and does not favour any rank.
//
// The new retrieval keeps query, reference, answer and type, is named
// "<id>#<rank>" (rank of the chunk in the original, from 1), and stays in
// its original's split.
//
// This is the shape of a judge's hardest case: with one chunk there is no
// other chunk to compare it with, so the judge must decide on the chunk
// alone.
func SingleChunk(src Source) Source {
	n := 0
	return sourceFunc(func() (Retrieval, error) {
		r, err := src.Next()
		if err != nil {
			return r, err
		}
		if len(r.Chunks) == 0 {
			return Retrieval{}, fmt.Errorf("retrieval %s: no chunks", r.ID)
		}
		wantRelevant := n%2 == 0
		n++
		rank := pickChunk(r, wantRelevant)
		single := r
		single.ID = r.ID + "#" + strconv.Itoa(rank+1)
		single.Split = r.HalfOf()
		single.Chunks = []Chunk{r.Chunks[rank]}
		return single, nil
	})
}

// pickChunk returns the index of the chunk SingleChunk takes from r.
func pickChunk(r Retrieval, wantRelevant bool) int {
	var wanted, others []int
	for i, c := range r.Chunks {
		if c.Relevant == wantRelevant {
			wanted = append(wanted, i)
		} else {
			others = append(others, i)
		}
	}
	candidates := wanted
	if len(candidates) == 0 {
		candidates = others
	}
	h := fnv.New32a()
	h.Write([]byte(r.ID))
	return candidates[h.Sum32()%uint32(len(candidates))]
}

type sourceFunc func() (Retrieval, error)

func (f sourceFunc) Next() (Retrieval, error) { return f() }
