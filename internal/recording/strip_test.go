package recording

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/processor/ragprecisionprocessor"
)

// sentTraces are spans as an application sends them: a retrieval the
// processor scores, one it cannot (no reference), one another evaluator
// has already judged, and a plain span.
func sentTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "rag-api")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	retrieval := func(name, reference string) ptrace.Span {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID(pcommon.TraceID{byte(spans.Len())})
		s.SetSpanID(pcommon.SpanID{byte(spans.Len())})
		s.Attributes().PutStr("rag.query", "Where is the Louvre?")
		if reference != "" {
			s.Attributes().PutStr("rag.reference", reference)
		}
		c := s.Attributes().PutEmptySlice("rag.chunks")
		c.AppendEmpty().SetStr("The Louvre is a museum in Paris.")
		c.AppendEmpty().SetStr("Oslo is in Norway.")
		return s
	}
	retrieval("scored", "The Louvre is in Paris.")
	retrieval("no-reference", "")
	other := retrieval("judged-elsewhere", "The Louvre is in Paris.")
	ev := other.Events().AppendEmpty()
	ev.SetName(ragattr.EvaluationEvent)
	ev.Attributes().PutStr(ragattr.EvaluationName, "faithfulness")
	plain := spans.AppendEmpty()
	plain.SetName("plain")
	plain.Attributes().PutStr("http.route", "/ask")
	return td
}

// What the processor writes, and nothing else, comes off: a span the
// processor selected, stripped, is the span that was sent; with a shadow
// judge's score beside the primary one too.
func TestStripUndoesTheProcessor(t *testing.T) {
	t.Run("judge", func(t *testing.T) { stripUndoes(t, func(*config.Config) {}) })
	t.Run("shadow", func(t *testing.T) {
		stripUndoes(t, func(c *config.Config) { c.ShadowJudge.Percentage = 100 })
	})
}

func stripUndoes(t *testing.T, mutate func(*config.Config)) {
	ctx := context.Background()
	f := ragprecisionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*config.Config)
	mutate(cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := p.ConsumeTraces(ctx, sentTraces()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Held spans (the shadow judge's) come out in batches of their own:
	// each span is compared with the one sent under its name.
	got := spansByName(sink.AllTraces()...)
	sent := spansByName(sentTraces())
	wantStatus := map[string]string{"scored": ragattr.StatusScored, "no-reference": ragattr.StatusNoReference,
		"judged-elsewhere": ragattr.StatusScored, "plain": ""}
	if len(got) != len(wantStatus) {
		t.Fatalf("%d spans out, %d sent", len(got), len(wantStatus))
	}
	for name, want := range wantStatus {
		if st := ResultOf(got[name]).Status; st != want {
			t.Fatalf("span %s: status %q, want %q", name, st, want)
		}
	}
	if _, ok := got["scored"].Attributes().Get(ragattr.Shadow); ok != cfg.ShadowJudge.Enabled() {
		t.Fatalf("shadow score on the scored span: %v, shadow judge on: %v", ok, cfg.ShadowJudge.Enabled())
	}
	if n := got["judged-elsewhere"].Events().Len(); n != 2 {
		t.Fatalf("the judged span has %d events, want the other evaluator's and the processor's", n)
	}
	for name, s := range got {
		if stripped := Strip(s); stripped != (wantStatus[name] != "") {
			t.Fatalf("span %s: Strip reported %v", name, stripped)
		}
		if a, b := spanJSON(t, s), spanJSON(t, sent[name]); a != b {
			t.Fatalf("stripped:\n%s\nsent:\n%s", a, b)
		}
	}
}

func spansByName(all ...ptrace.Traces) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, td := range all {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				for k := 0; k < sss.At(j).Spans().Len(); k++ {
					s := sss.At(j).Spans().At(k)
					out[s.Name()] = s
				}
			}
		}
	}
	return out
}

// spanJSON is a span alone, as OTLP JSON.
func spanJSON(t *testing.T, s ptrace.Span) string {
	t.Helper()
	td := ptrace.NewTraces()
	s.CopyTo(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIsAnnotation(t *testing.T) {
	for k, want := range map[string]bool{
		ragattr.Precision: true, ragattr.Status: true, ragattr.Verdicts: true, ragattr.ShadowJudge: true,
		ragattr.RetrievalOutcome: true, ragattr.NDCG: true,
		"rag.contextual_precision_x": false, "rag.chunks": false, "rag.retrieval.index": false, "rag.query": false,
	} {
		if IsAnnotation(k) != want {
			t.Errorf("IsAnnotation(%q) = %v", k, !want)
		}
	}
}
