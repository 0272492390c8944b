package ragprecisionprocessor

import (
	"time"

	"github.com/ragprecision/ragprecision/judge"
)

// judgeObserver passes what the judge does to the processor's telemetry
// and health reporting.
type judgeObserver struct{ p *ragProcessor }

func (o judgeObserver) JudgeRequest(outcome judge.Outcome, reason judge.Reason, latency time.Duration, usage judge.Usage) {
	o.p.tel.judgeRequest(outcome, reason, latency, usage)
}

func (o judgeObserver) CacheLookups(hits, misses int) { o.p.tel.cacheLookups(hits, misses) }

func (o judgeObserver) JudgeHealth(err error) { o.p.health.report(err) }
