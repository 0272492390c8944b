package judge

import "context"

// CascadePrefix begins the ID of a cascade: "cascade:" and its second
// stage's "provider:model".
const CascadePrefix = "cascade:"

// Cascade puts a cheap first stage before the backend: it decides the
// verdicts it is sure of, and the backend is asked about the rest.
type Cascade struct {
	// First is the first stage: an inline backend whose verdicts carry a
	// confidence (builtin:lexical).
	First Backend
	// MinConfidence is the confidence from which First's verdicts are final.
	MinConfidence float64
	// OnlyNegatives keeps only First's sure "not relevant" verdicts: for a
	// backend that reads criteria First cannot, which can only narrow what
	// is relevant.
	OnlyNegatives bool
}

// firstStage lets the first stage decide the verdicts it is sure of; the
// rest stay for the backend. It returns the number of chunks left. A first
// stage that fails decides nothing.
func (c *Cascade) firstStage(j *job) int {
	vs, _, err := c.First.Attempt(context.Background(), j.query, j.ref, j.texts)
	if err != nil || len(vs) != len(j.texts) {
		return len(j.texts)
	}
	texts, idx := j.texts[:0], j.idx[:0]
	for k, v := range vs {
		if v.Confidence >= c.MinConfidence && (!c.OnlyNegatives || !v.Relevant) {
			j.verdicts[j.idx[k]] = v
			continue
		}
		texts, idx = append(texts, j.texts[k]), append(idx, j.idx[k])
	}
	j.texts, j.idx = texts, idx
	return len(texts)
}
