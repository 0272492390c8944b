package ragprecisionprocessor

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// healthReporter tells the collector, and the log, when the judge starts
// failing and when it recovers. The collector passes component status to
// its health extension: with the health_check extension's
// extension.healthcheck.useComponentStatus feature gate (or the
// healthcheckv2 extension) and component_health.include_recoverable_errors,
// the processor shows as recoverable error while the judge is down.
type healthReporter struct {
	logger  *zap.Logger
	mu      sync.Mutex
	host    component.Host
	failing atomic.Bool
}

func newHealthReporter(logger *zap.Logger) *healthReporter {
	return &healthReporter{logger: logger}
}

func (r *healthReporter) start(host component.Host) {
	r.mu.Lock()
	r.host = host
	r.mu.Unlock()
}

// healthy reports whether the judge is answering (its breaker is closed).
func (r *healthReporter) healthy() bool { return !r.failing.Load() }

// report records a change of the judge's health: err is the failure that
// made it unavailable, nil its recovery.
func (r *healthReporter) report(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ev *componentstatus.Event
	if err != nil {
		r.failing.Store(true)
		r.logger.Warn("the judge is failing: selected spans are forwarded unscored with status judge_error until it answers again; one judgement at a time is let through to probe it",
			zap.String("reason", string(judge.ReasonOf(err))), zap.String("advice", adviceFor(ragattr.StatusJudgeError, string(judge.ReasonOf(err)))), zap.Error(err))
		ev = componentstatus.NewRecoverableErrorEvent(err)
	} else {
		r.failing.Store(false)
		r.logger.Info("the judge answers again; spans are judged as before")
		ev = componentstatus.NewEvent(componentstatus.StatusOK)
	}
	if r.host != nil {
		componentstatus.ReportStatus(r.host, ev)
	}
}
