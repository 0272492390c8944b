package ragprecisionprocessor

import (
	"time"

	"github.com/ragprecision/ragprecision/judge"
)

// judgeObserver passes what a judge does to its metrics, and changes of its
// health to health (the primary's reporter; nil for a shadow, whose
// failures only count).
type judgeObserver struct {
	metrics *judgeMetrics
	health  func(error)
}

func (o judgeObserver) JudgeRequest(purpose judge.Purpose, outcome judge.Outcome, reason judge.Reason, latency time.Duration, usage judge.Usage) {
	o.metrics.request(purpose, outcome, reason, latency, usage)
}

func (o judgeObserver) CacheLookups(hits, misses int) { o.metrics.cacheLookups(hits, misses) }

func (o judgeObserver) JudgeHealth(err error) {
	if o.health != nil {
		o.health(err)
	}
}
