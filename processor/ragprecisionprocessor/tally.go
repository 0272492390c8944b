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
	service, dataSource string
	candidates, chosen  int64
}

func (c *candidateCounts) add(service, dataSource string, selected bool) {
	e := c.series(service, dataSource)
	e.candidates++
	if selected {
		e.chosen++
	}
}

// series is the entry of a service and data source, added if new.
func (c *candidateCounts) series(service, dataSource string) *candidateCount {
	for i := range c.few[:c.n] {
		if c.few[i].service == service && c.few[i].dataSource == dataSource {
			return &c.few[i]
		}
	}
	for i := range c.more {
		if c.more[i].service == service && c.more[i].dataSource == dataSource {
			return &c.more[i]
		}
	}
	e := candidateCount{service: service, dataSource: dataSource}
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
	series         [4]string // scoreSets' key
	sets           scoreLabelSets
	scored, passed int64
	squares        float64
}

type tallyStage struct {
	key stageKey
	n   int64
}

func (tl *scoreTally) addScores(s tallyScores) {
	for i := range tl.scores {
		if tl.scores[i].series == s.series {
			tl.scores[i].scored += s.scored
			tl.scores[i].passed += s.passed
			tl.scores[i].squares += s.squares
			return
		}
	}
	tl.scores = append(tl.scores, s)
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
