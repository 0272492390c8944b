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
// processor selected, stripped, is the span that was sent.
func TestStripUndoesTheProcessor(t *testing.T) {
	ctx := context.Background()
	f := ragprecisionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*config.Config)
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
	if len(sink.AllTraces()) != 1 {
		t.Fatalf("%d batches out", len(sink.AllTraces()))
	}
	out := sink.AllTraces()[0]
	spans := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	wantStatus := []string{ragattr.StatusScored, ragattr.StatusNoReference, ragattr.StatusScored, ""}
	for i, want := range wantStatus {
		if got := ResultOf(spans.At(i)).Status; got != want {
			t.Fatalf("span %s: status %q, want %q", spans.At(i).Name(), got, want)
		}
	}
	if spans.At(2).Events().Len() != 2 {
		t.Fatalf("the judged span has %d events, want the other evaluator's and the processor's", spans.At(2).Events().Len())
	}
	for i := 0; i < spans.Len(); i++ {
		if got, want := Strip(spans.At(i)), wantStatus[i] != ""; got != want {
			t.Fatalf("span %s: Strip reported %v", spans.At(i).Name(), got)
		}
	}
	m := &ptrace.JSONMarshaler{}
	got, _ := m.MarshalTraces(out)
	want, _ := m.MarshalTraces(sentTraces())
	if string(got) != string(want) {
		t.Fatalf("stripped:\n%s\nsent:\n%s", got, want)
	}
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
