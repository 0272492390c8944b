package config

import (
	"fmt"
	"math"
	"time"
)

// AdaptiveSampling lets the processor choose the sampling percentage of
// each (service_name, data_source) itself, for a judge spend, instead of
// the one fixed sampling_percentage.
type AdaptiveSampling struct {
	// Enabled turns adaptive sampling on; sampling_percentage is then
	// unused. Default false.
	Enabled bool `mapstructure:"enabled"`
	// JudgeRequestsPerSecond is the judge spend the rates are chosen for.
	// 0 means 80% of judge.max_requests_per_second, so that the budget
	// stays a safety net rather than the controller. builtin:lexical sends
	// no requests and has no budget: with it, and with no budget, it must
	// be set, and counts the requests an LLM judge in judge.mode would
	// send. Default 0.
	JudgeRequestsPerSecond float64 `mapstructure:"judge_requests_per_second"`
	// MinJudgedPerHour is what each (service_name, data_source) is owed
	// before busier ones get more: judged spans an hour, or all its traffic
	// if less. Default 100.
	MinJudgedPerHour float64 `mapstructure:"min_judged_per_hour"`
	// MinPercentage and MaxPercentage bound every series' percentage, in
	// (0, 100]. Defaults 0.1 and 100.
	MinPercentage float64 `mapstructure:"min_percentage"`
	MaxPercentage float64 `mapstructure:"max_percentage"`
	// AdjustInterval is how often the percentages are recomputed. Default
	// 30s.
	AdjustInterval time.Duration `mapstructure:"adjust_interval"`
}

func defaultAdaptiveSampling() AdaptiveSampling {
	return AdaptiveSampling{MinJudgedPerHour: 100, MinPercentage: 0.1, MaxPercentage: 100, AdjustInterval: 30 * time.Second}
}

// spendShare is the share of judge.max_requests_per_second that adaptive
// sampling spends when judge_requests_per_second is 0.
const spendShare = 0.8

// Spend is the judge requests per second the adaptive rates are chosen
// for: judge_requests_per_second, or 80% of the judge's budget.
func (c *Config) Spend() float64 {
	if s := c.AdaptiveSampling.JudgeRequestsPerSecond; s > 0 {
		return s
	}
	return spendShare * c.Judge.MaxRequestsPerSecond
}

// problems reports what is wrong with adaptive_sampling:; the keys are
// checked whether or not it is enabled, so that turning it on cannot
// reveal a mistake made earlier.
func (a *AdaptiveSampling) problems(j *Judge) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !(a.JudgeRequestsPerSecond >= 0) || math.IsInf(a.JudgeRequestsPerSecond, 1) {
		add("adaptive_sampling.judge_requests_per_second: must be 0 (80%% of judge.max_requests_per_second) or a positive number, got %v", a.JudgeRequestsPerSecond)
	}
	if !(a.MinJudgedPerHour >= 0) || math.IsInf(a.MinJudgedPerHour, 1) {
		add("adaptive_sampling.min_judged_per_hour: must be 0 or a positive number, got %v", a.MinJudgedPerHour)
	}
	minOK := a.MinPercentage > 0 && a.MinPercentage <= 100
	if !minOK {
		add("adaptive_sampling.min_percentage: must be within (0, 100], got %v", a.MinPercentage)
	}
	maxOK := a.MaxPercentage > 0 && a.MaxPercentage <= 100
	if !maxOK {
		add("adaptive_sampling.max_percentage: must be within (0, 100], got %v", a.MaxPercentage)
	}
	if minOK && maxOK && a.MinPercentage > a.MaxPercentage {
		add("adaptive_sampling.min_percentage: %v is above adaptive_sampling.max_percentage (%v)", a.MinPercentage, a.MaxPercentage)
	}
	durationAtLeast(add, "adaptive_sampling.adjust_interval", a.AdjustInterval, time.Second)
	if a.Enabled && a.JudgeRequestsPerSecond == 0 {
		switch {
		case j.Model.Err() == nil && j.Model.Builtin():
			add("adaptive_sampling.judge_requests_per_second: builtin:lexical sends no requests and has no budget to take 80%% of; set the spend, counted as the requests an LLM judge in judge.mode would send")
		case j.MaxRequestsPerSecond == 0:
			add("adaptive_sampling.judge_requests_per_second: judge.max_requests_per_second is 0 (no budget) and leaves nothing to take 80%% of; set the spend")
		}
	}
	return errs
}
