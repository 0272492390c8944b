package ragprecisionprocessor

// candidateCounts are the candidates and selected spans of one batch, per
// service and data source. The first few series are kept in place rather
// than in a slice, so that counting the candidates of most batches
// allocates nothing.
type candidateCounts struct {
	few  [4]candidateCount
	n    int // entries of few in use
	more []candidateCount
}

type candidateCount struct {
	series
	candidates, chosen int64
	// With adaptive_sampling: the series' state and the sampler this
	// batch selects with, and the selected spans read and their chunks.
	source        *sourceRate
	sampler       *sampler
	reads, chunks int64
}

func (c *candidateCounts) add(s series, selected bool) { c.entry(s).count(selected) }

// count counts a candidate, selected or not.
func (e *candidateCount) count(selected bool) {
	e.candidates++
	if selected {
		e.chosen++
	}
}

// entry is the entry of a series, added if new.
func (c *candidateCounts) entry(s series) *candidateCount {
	for i := range c.few[:c.n] {
		if c.few[i].series == s {
			return &c.few[i]
		}
	}
	for i := range c.more {
		if c.more[i].series == s {
			return &c.more[i]
		}
	}
	e := candidateCount{series: s}
	if c.n < len(c.few) {
		c.few[c.n] = e
		c.n++
		return &c.few[c.n-1]
	}
	c.more = append(c.more, e)
	return &c.more[len(c.more)-1]
}

// scoreTally gathers the counters of the spans one ConsumeTraces call
// scores in place (an inline judge's, or the cache's), by series.
type scoreTally struct {
	scores []tallyScores
	stages []tallyStage
}

type tallyScores struct {
	key            scoreKey
	sets           *scoreLabelSets
	scored, passed int64
	squares        float64
	// weight and weightedSum are the Horvitz-Thompson sums Σ 1/p and
	// Σ CP/p.
	weight, weightedSum float64
	// outcomes counts the scores by outcome (outcomeIndex), judged and
	// relevant the chunks by rank (rankIndex).
	outcomes         [numOutcomes]int64
	judged, relevant [numRanks]int64
}

// add adds o's counts to s's.
func (s *tallyScores) add(o *tallyScores) {
	s.scored += o.scored
	s.passed += o.passed
	s.squares += o.squares
	s.weight += o.weight
	s.weightedSum += o.weightedSum
	for i := range s.outcomes {
		s.outcomes[i] += o.outcomes[i]
	}
	for i := range s.judged {
		s.judged[i] += o.judged[i]
		s.relevant[i] += o.relevant[i]
	}
}

type tallyStage struct {
	key stageKey
	n   int64
}

func (tl *scoreTally) addScores(s *tallyScores) {
	for i := range tl.scores {
		if tl.scores[i].key == s.key {
			tl.scores[i].add(s)
			return
		}
	}
	tl.scores = append(tl.scores, *s)
}

func (tl *scoreTally) addStage(k stageKey, n int64) {
	for i := range tl.stages {
		if tl.stages[i].key == k {
			tl.stages[i].n += n
			return
		}
	}
	tl.stages = append(tl.stages, tallyStage{k, n})
}
