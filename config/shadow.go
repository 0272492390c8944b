package config

import (
	"fmt"
	"math"
	"time"
)

// ShadowJudge is a second judge that judges a share of the scored spans
// beside the primary one, to try a model, prompt or criteria on live
// traffic, or to measure a cascade against its LLM alone. Its score goes on
// the span beside the primary's, and their agreement into
// shadow_verdicts_total; it never changes the primary score, status or
// histogram, and never holds a span beyond max_wait.
type ShadowJudge struct {
	// Judge has the keys of judge:, for the shadow's own model, endpoint,
	// key, limits and budget.
	Judge `mapstructure:",squash"`
	// Percentage is the share of scored spans, in [0, 100], the shadow
	// judges too, chosen by trace ID. Default 0: no shadow judge.
	Percentage float64 `mapstructure:"percentage"`
}

func defaultShadowJudge() ShadowJudge { return ShadowJudge{Judge: defaultJudge()} }

// Enabled reports whether the shadow judge judges any span.
func (s *ShadowJudge) Enabled() bool { return s.Percentage > 0 }

// problems reports what is wrong with shadow_judge:, against the max_wait
// its judgements must fit in.
func (s *ShadowJudge) problems(maxWait time.Duration) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if math.IsNaN(s.Percentage) || s.Percentage < 0 || s.Percentage > 100 {
		add("shadow_judge.percentage: must be within [0, 100], got %v", s.Percentage)
	}
	if !s.Enabled() {
		return errs
	}
	errs = append(errs, s.Judge.problems("shadow_judge")...)
	if s.Canary.Enabled() {
		add("shadow_judge.canary: only the primary judge runs a canary; set it under judge:")
	}
	if t := s.ClientConfig.Timeout; t > maxWait && maxWait > 0 {
		add("shadow_judge.timeout: %s is longer than max_wait (%s), within which every shadow judgement must end; lower it", t, maxWait)
	}
	return errs
}
