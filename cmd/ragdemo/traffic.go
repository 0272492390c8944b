package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// serviceName is the resource service.name of the demo's spans, and so the
// service_name label of the histogram.
const serviceName = "ragdemo"

// ranking names which of a question's two retrievals a trace carries.
type ranking string

const (
	rankingGood ranking = "good"
	rankingBad  ranking = "bad"
)

// variantAttribute is the retrieval span attribute naming the retriever
// that ranked its chunks. examples/demo.yaml names it in attributes.variant,
// so that its value becomes the variant label of every product metric.
const variantAttribute = "retriever.version"

// The demo's two retrievers, as a rollout runs them side by side on the same
// traffic: v1 returns each question's bad ranking, v2 (its successor) the
// good one.
const (
	variantOld = "v1"
	variantNew = "v2"
)

// variant is the version of the retriever that returns ranking r.
func (r ranking) variant() string {
	if r == rankingGood {
		return variantNew
	}
	return variantOld
}

// sentCase is one RAG trace the demo sent: what it asked, and the ID of the
// retrieval span whose score will come back.
type sentCase struct {
	question  question
	ranking   ranking
	variant   string // the retriever version on the retrieval span
	chunkIDs  []string
	traceID   trace.TraceID
	retrieval trace.SpanID
}

// sent is everything the demo sent.
type sent struct {
	cases []sentCase
	// plain are non-RAG spans, which must come back untouched.
	plain      []trace.SpanID
	plainTrace trace.TraceID
	// spans is the total number of spans sent.
	spans int
}

// traceIDs are the traces the demo sent.
func (s sent) traceIDs() map[pcommon.TraceID]bool {
	ids := map[pcommon.TraceID]bool{pcommon.TraceID(s.plainTrace): true}
	for _, c := range s.cases {
		ids[pcommon.TraceID(c.traceID)] = true
	}
	return ids
}

// sendTraffic sends one trace per question and ranking, plus a plain trace,
// to the collector's OTLP/gRPC receiver at endpoint, and flushes them.
func sendTraffic(ctx context.Context, endpoint string) (sent, error) {
	exporter, err := otlptracegrpc.New(ctx,
		otlptracegrpc.WithEndpoint(endpoint),
		otlptracegrpc.WithInsecure(),
	)
	if err != nil {
		return sent{}, fmt.Errorf("OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(),
		resource.NewSchemaless(attribute.String("service.name", serviceName)))
	if err != nil {
		return sent{}, fmt.Errorf("resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		// The processor does the sampling that matters here (which spans
		// are judged); the SDK keeps every trace so that all arrive.
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exporter),
		sdktrace.WithResource(res),
	)
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(shutdownCtx)
	}()

	tracer := tp.Tracer("github.com/ragprecision/ragprecision/cmd/ragdemo")
	var s sent
	for _, q := range questions {
		for _, r := range []ranking{rankingGood, rankingBad} {
			c, n := emitQuestion(ctx, tracer, q, r)
			s.cases = append(s.cases, c)
			s.spans += n
		}
	}
	s.plainTrace, s.plain = emitPlain(ctx, tracer)
	s.spans += len(s.plain)

	// ForceFlush returns once the exporter has handed every span to the
	// collector (or failed to), so a failure surfaces here, not as missing
	// spans later.
	if err := tp.ForceFlush(ctx); err != nil {
		return sent{}, fmt.Errorf("sending spans to the collector at %s: %w", endpoint, err)
	}
	return s, nil
}

// emitQuestion writes one trace for q answered from ranking r: a root span
// "ask" over a retrieval span (and, for the dialects that carry the answer
// elsewhere in the trace, an LLM span), in q's dialect. It returns the case
// and the number of spans written.
func emitQuestion(ctx context.Context, tracer trace.Tracer, q question, r ranking) (sentCase, int) {
	ids := q.good
	if r == rankingBad {
		ids = q.bad
	}
	docs := texts(ids)

	// Every question is its own trace: a new root, not a child of ctx.
	ctx, root := tracer.Start(ctx, "ask", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer))
	c := sentCase{question: q, ranking: r, variant: r.variant(), chunkIDs: ids, traceID: root.SpanContext().TraceID()}
	variant := attribute.String(variantAttribute, c.variant)
	spans := 2

	switch q.dialect {
	case dialectProject:
		// The project's keys: everything the processor needs is on the
		// retrieval span, expected answer included.
		_, span := tracer.Start(ctx, "retrieve")
		span.SetAttributes(
			attribute.String("rag.query", q.text),
			attribute.String("rag.reference", q.answer),
			attribute.StringSlice("rag.chunks", docs),
			attribute.String("gen_ai.data_source.id", dataSource),
			variant,
		)
		c.retrieval = span.SpanContext().SpanID()
		span.End()
		root.SetAttributes(attribute.String("rag.query", q.text))

	case dialectOpenInference:
		// OpenInference flattens the documents into indexed keys. The
		// answer is on the CHAIN root, which ends last: the processor holds
		// the retrieval span until the root arrives (trace_join).
		root.SetAttributes(
			attribute.String("openinference.span.kind", "CHAIN"),
			attribute.String("input.value", q.text),
		)
		_, span := tracer.Start(ctx, "retrieve")
		attrs := []attribute.KeyValue{
			attribute.String("openinference.span.kind", "RETRIEVER"),
			attribute.String("input.value", q.text),
			attribute.String("gen_ai.data_source.id", dataSource),
			variant,
		}
		for i, id := range ids {
			prefix := "retrieval.documents." + strconv.Itoa(i) + ".document."
			attrs = append(attrs,
				attribute.String(prefix+"id", id),
				attribute.String(prefix+"content", docs[i]),
			)
		}
		span.SetAttributes(attrs...)
		c.retrieval = span.SpanContext().SpanID()
		span.End()

		_, llm := tracer.Start(ctx, "generate")
		llm.SetAttributes(
			attribute.String("openinference.span.kind", "LLM"),
			attribute.String("llm.model_name", "demo-model"),
			attribute.String("output.value", q.answer),
		)
		llm.End()
		spans++
		root.SetAttributes(attribute.String("output.value", q.answer))

	case dialectGenAI:
		// The GenAI conventions put the answer on the chat span, not on the
		// root, so trace_join uses the last-ending LLM span's answer once
		// trace_join.wait has passed without a root answer.
		_, span := tracer.Start(ctx, "retrieval "+dataSource, trace.WithSpanKind(trace.SpanKindClient))
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "retrieval"),
			attribute.String("gen_ai.retrieval.query.text", q.text),
			attribute.String("gen_ai.retrieval.documents", genAIDocuments(ids, docs)),
			attribute.String("gen_ai.data_source.id", dataSource),
			variant,
		)
		c.retrieval = span.SpanContext().SpanID()
		span.End()

		_, chat := tracer.Start(ctx, "chat demo-model", trace.WithSpanKind(trace.SpanKindClient))
		chat.SetAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.request.model", "demo-model"),
			attribute.String("gen_ai.output.messages", genAIOutput(q.answer)),
		)
		chat.End()
		spans++
	}
	root.End()
	return c, spans
}

// emitPlain writes a trace with nothing RAG about it, which the processor
// must pass on unchanged and undelayed. It returns the trace and span IDs.
func emitPlain(ctx context.Context, tracer trace.Tracer) (trace.TraceID, []trace.SpanID) {
	ctx, root := tracer.Start(ctx, "GET /healthz", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer))
	root.SetAttributes(
		attribute.String("http.request.method", "GET"),
		attribute.String("url.path", "/healthz"),
		attribute.Int("http.response.status_code", 200),
	)
	_, child := tracer.Start(ctx, "SELECT ragdemo.settings", trace.WithSpanKind(trace.SpanKindClient))
	child.SetAttributes(
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.query.text", "SELECT value FROM settings WHERE name = $1"),
	)
	child.End()
	root.End()
	return root.SpanContext().TraceID(), []trace.SpanID{root.SpanContext().SpanID(), child.SpanContext().SpanID()}
}

// genAIDocuments is gen_ai.retrieval.documents: a JSON array of {id, content}.
func genAIDocuments(ids, docs []string) string {
	type doc struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	out := make([]doc, len(ids))
	for i := range ids {
		out[i] = doc{ID: ids[i], Content: docs[i]}
	}
	b, _ := json.Marshal(out) // cannot fail: strings only
	return string(b)
}

// genAIOutput is gen_ai.output.messages holding one assistant text reply.
func genAIOutput(answer string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	b, _ := json.Marshal([]message{{Role: "assistant", Parts: []part{{Type: "text", Content: answer}}}})
	return string(b)
}
