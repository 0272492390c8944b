package ragprecisionprocessor

import (
	"slices"
	"testing"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/metricdefs"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// The closed label values metadata.yaml documents are those the code
// records, so that the docs and the rules' checker cannot drift from it.
func TestMetadataValuesAreTheCodes(t *testing.T) {
	ms, err := metricdefs.Load()
	if err != nil {
		t.Fatal(err)
	}
	values := func(metric, label string) []string {
		t.Helper()
		for _, m := range ms {
			if m.Name != metric {
				continue
			}
			for _, l := range m.Labels {
				if l.Name == label {
					return l.Values
				}
			}
		}
		t.Fatalf("metadata.yaml: %s has no label %s", metric, label)
		return nil
	}
	var reasons, outcomes []string
	for _, r := range judge.Reasons {
		reasons = append(reasons, string(r))
	}
	for _, o := range judge.Outcomes {
		outcomes = append(outcomes, string(o))
	}
	const prefix = "otelcol_processor_ragprecision_"
	for _, c := range []struct {
		metric, label string
		code          []string
	}{
		{prefix + "unscored_spans_total", "status", ragattr.UnscoredStatuses},
		{prefix + "unscored_spans_total", "reason", append(slices.Clone(reasons), reasonUnknown, reasonPendingSpans, reasonPendingBytes, reasonJudgeCapacity)},
		{prefix + "judge_requests_total", "outcome", outcomes},
		{prefix + "judge_requests_total", "reason", reasons},
		{prefix + "dropped_spans_total", "reason", []string{dropRefused, dropShutdown}},
		{"rag_contextual_precision", "reference_source", []string{config.SourceReference, config.SourceAnswer, config.SourceQuery}},
	} {
		if got := values(c.metric, c.label); !slices.Equal(got, c.code) {
			t.Errorf("%s{%s}: metadata.yaml lists %v, the code records %v", c.metric, c.label, got, c.code)
		}
	}
}
