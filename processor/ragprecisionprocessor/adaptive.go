package ragprecisionprocessor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/judge"
	"github.com/ragprecision/ragprecision/judge/openai"
)

// adaptiveSettings are the controller's options from the configuration.
func adaptiveSettings(cfg *config.Config) rateSettings {
	a := cfg.AdaptiveSampling
	assumed := cfg.MaxChunks
	if cfg.TopK > 0 && cfg.TopK < assumed {
		assumed = cfg.TopK
	}
	budget := cfg.Judge.MaxRequestsPerSecond
	if cfg.Judge.Model.Builtin() {
		budget = 0 // builtin:lexical has no budget
	}
	// judge.timeout bounds the judge's latency, with which the engine
	// bounds a span's wait for the budget: the controller counts on no
	// longer a wait.
	wait := judge.BudgetWait(cfg.MaxWait, cfg.Judge.ClientConfig.Timeout)
	return rateSettings{
		spend:         cfg.Spend(),
		budget:        budget,
		budgetWait:    wait,
		minPerSecond:  a.MinJudgedPerHour / 3600,
		minProb:       a.MinPercentage / 100,
		maxProb:       a.MaxPercentage / 100,
		interval:      a.AdjustInterval,
		maxSeries:     cfg.MaxSeries,
		perChunk:      cfg.Judge.Mode == string(openai.ModePerChunk),
		assumedChunks: float64(assumed),
	}
}

// observeBatch passes a batch's counts to the controller, and lets it
// adjust.
func (c *rateController) observeBatch(counts *candidateCounts) {
	for i := range counts.few[:counts.n] {
		e := &counts.few[i]
		c.observe(e.source, e.candidates, e.reads, e.chunks)
	}
	for i := range counts.more {
		e := &counts.more[i]
		c.observe(e.source, e.candidates, e.reads, e.chunks)
	}
	c.tick()
}

// observePercentages reports each series' percentage
// (rag_sampling_percentage).
func (c *rateController) observePercentages(_ context.Context, obs metric.Float64Observer) error {
	c.each(func(k sourceKey, p float64) {
		obs.Observe(100*p, metric.WithAttributes(attribute.String(labelServiceName, k.service), attribute.String(labelDataSource, k.dataSource)))
	})
	return nil
}

// logRateChange tells the operator of a series' rate that moved by more
// than 2×.
func (p *ragProcessor) logRateChange(k sourceKey, from, to float64) {
	p.logger.Info("adaptive sampling changed a data source's sampling percentage more than 2x",
		zap.String(labelServiceName, k.service), zap.String(labelDataSource, k.dataSource),
		zap.Float64("from_percentage", 100*from), zap.Float64("to_percentage", 100*to))
}
