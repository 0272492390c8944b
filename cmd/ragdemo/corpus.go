package main

// The demo's knowledge base: a small handbook on observability, written for
// this project, and the questions a RAG application might be asked about it.
//
// Every question comes with two retrievals of the same chunks: a good ranking
// (what a decent retriever returns, relevant chunks on top) and a bad one
// (the same chunks with the distractors on top). Because the chunk sets are
// identical, any difference in Contextual Precision between the two is due
// to the ranking alone, which is exactly what the metric is meant to catch.
// The demo sends them as two versions of a retriever running side by side:
// the bad ranking as v1, the good one as v2.
//
// The good rankings are deliberately not all perfect: a real retriever often
// lets a near-miss slip in at rank two, and the judge is not an oracle
// either. A mix of scores shows more about the metric than a row of 1.0s.

// dataSource is the retrieval spans' gen_ai.data_source.id, which becomes
// the data_source label of the rag_contextual_precision histogram.
const dataSource = "handbook"

// chunks maps a chunk ID to its text.
var chunks = map[string]string{
	// OpenTelemetry sampling.
	"head-sampling": "Head sampling makes the keep-or-drop decision when the root span starts, " +
		"before anything is known about how the request will go. The TraceIdRatioBased sampler " +
		"keeps a fixed fraction of traces by comparing the trace ID with a threshold. It is cheap, " +
		"but it drops errors and slow requests as readily as healthy ones.",
	"parent-based": "A ParentBased sampler lets the parent decide: when a span has a parent, it " +
		"copies the parent's sampled flag, which travels between services in the trace-flags field " +
		"of the W3C traceparent header. Only root spans consult the wrapped root sampler, so a " +
		"trace is either recorded in every service or in none.",
	"tail-sampling": "Tail sampling decides after the trace is complete. The Collector's " +
		"tail_sampling processor buffers spans for a decision_wait period, then applies policies " +
		"such as keeping every trace with an error or a latency above a limit. The decision needs " +
		"the whole trace, so every span of a trace must reach the same Collector instance.",
	"load-balancing": "When several Collectors run tail sampling, a first tier running the " +
		"loadbalancing exporter routes each span by its trace ID, so that one backend Collector " +
		"receives the whole trace. Adding or removing a backend reshuffles a share of the trace " +
		"IDs, which briefly splits traces that are in flight.",

	// The Collector.
	"pipelines": "A Collector pipeline connects receivers, processors and exporters for one " +
		"signal: traces, metrics or logs. Pipelines are declared under service::pipelines; a " +
		"component that is configured but listed in no pipeline is never started. Processors run " +
		"in the order they are listed.",
	"memory-limiter": "The memory_limiter processor belongs first in the processor list. It " +
		"checks memory use periodically and, above the soft limit, refuses incoming data so that " +
		"receivers return a retryable error to the sender; above the hard limit it also forces a " +
		"garbage collection. Placed first, it rejects data before other processors spend work on it.",
	"batch": "The batch processor groups spans, metric points or log records into larger " +
		"requests, which compress better and cost fewer round trips. A batch is sent when it " +
		"reaches send_batch_size items or when the timeout expires, whichever comes first.",
	"health-check": "The health_check extension serves an HTTP endpoint, by default on port " +
		"13133, that answers 200 once every pipeline has started and 503 while the Collector " +
		"is starting or shutting down. Kubernetes readiness and liveness probes usually point at it.",

	// Tail latency.
	"percentiles": "The 99th percentile latency, p99, is the time that 99 percent of requests " +
		"stay under. Averages hide the slow tail: a service whose mean is 20 ms can still make " +
		"one request in a hundred wait two seconds.",
	"fan-out": "Fan-out makes the tail dominate. When one user request waits for 100 backend " +
		"calls and each backend is slow one time in a hundred, the chance that at least one call " +
		"is slow is 1 - 0.99^100, about 63 percent: most user requests see a backend's p99.",
	"hedged-requests": "Hedged requests cut tail latency by sending a second copy of a request " +
		"to another replica when the first has not answered within, say, the 95th percentile " +
		"latency, and using whichever reply arrives first. The extra load is a few percent, " +
		"because only the slowest requests are hedged.",
	"coordinated-omission": "A load generator that waits for each reply before sending the next " +
		"request under-reports latency: while the server stalls, the generator sends nothing, so " +
		"the stall is recorded once instead of for every request that should have been sent. " +
		"This is called coordinated omission.",

	// Prometheus histograms.
	"histogram-buckets": "A Prometheus histogram exports cumulative buckets, one series per upper " +
		"bound labelled le, plus _count and _sum series. The bucket with le=\"0.5\" counts every " +
		"observation at or below 0.5, so buckets never decrease as le grows.",
	"histogram-quantile": "The histogram_quantile function estimates a quantile from buckets: it " +
		"finds the bucket in which the requested rank falls and interpolates linearly between " +
		"that bucket's lower and upper bounds. The estimate is only as fine as the bucket layout.",
	"alerting": "Alert rules should fire on symptoms that users feel, such as error ratios or " +
		"latency, and should require the condition to hold for a few minutes so that one noisy " +
		"scrape does not page anyone at night.",

	// Retrieval quality.
	"contextual-precision": "Contextual Precision scores the order of retrieved chunks: it " +
		"averages precision at each rank that holds a relevant chunk, so relevant chunks ranked " +
		"above irrelevant ones score high, and the same chunks ranked lower score less.",
	"chunking": "Documents are split into chunks before they are embedded. Small chunks match " +
		"queries precisely but lose surrounding context; large chunks keep context but dilute " +
		"the embedding. Overlapping neighbouring chunks by a sentence or two is a common compromise.",
}

// dialect is the span attribute convention a trace is written in (docs/SOURCES.md,
// "Retrieval dialects").
type dialect string

const (
	// dialectProject is the project's own keys: rag.query, rag.reference and
	// rag.chunks on the retrieval span. The expected answer travels on the
	// span, so the processor needs nothing else from the trace.
	dialectProject dialect = "rag.*"
	// dialectOpenInference is Arize OpenInference: a CHAIN root span with
	// output.value (the answer) over a RETRIEVER span. The retrieval span has
	// no answer; trace_join takes the root's.
	dialectOpenInference dialect = "openinference"
	// dialectGenAI is the OpenTelemetry GenAI semantic conventions: a
	// retrieval span and a chat span whose gen_ai.output.messages hold the
	// answer. The root carries no answer, so trace_join falls back, after
	// trace_join.wait, to the last-ending LLM span's.
	dialectGenAI dialect = "gen_ai"
)

// question is one user query with its expected answer and two rankings of
// the same chunks.
type question struct {
	text    string
	answer  string
	dialect dialect
	// relevant are the chunks the author considers necessary for the
	// answer; the rest of the ranking are distractors (related topic, no
	// answer).
	relevant []string
	good     []string // relevant chunks on top, as a decent retriever returns them
	bad      []string // the same chunks, distractors on top
}

// questions are asked in this order; each is sent twice (good by v2, then
// bad by v1).
var questions = []question{
	{
		text:     "Why must all spans of a trace reach the same Collector when using tail sampling?",
		answer:   "Because the tail_sampling processor decides on the whole trace, so the loadbalancing exporter routes spans by trace ID to one backend Collector.",
		dialect:  dialectProject,
		relevant: []string{"tail-sampling", "load-balancing"},
		good:     []string{"tail-sampling", "load-balancing", "head-sampling", "batch"},
		bad:      []string{"head-sampling", "batch", "load-balancing", "tail-sampling"},
	},
	{
		text:     "Where should memory_limiter go in the processor list of a Collector pipeline?",
		answer:   "First, so that above the soft limit it refuses data before other processors spend work on it.",
		dialect:  dialectOpenInference,
		relevant: []string{"memory-limiter", "pipelines"},
		good:     []string{"memory-limiter", "batch", "pipelines", "health-check"},
		bad:      []string{"health-check", "batch", "pipelines", "memory-limiter"},
	},
	{
		text:     "What share of user requests see a slow backend when each request fans out to 100 backends?",
		answer:   "About 63 percent, when each backend is slow one time in a hundred: 1 - 0.99^100.",
		dialect:  dialectGenAI,
		relevant: []string{"fan-out", "percentiles"},
		good:     []string{"fan-out", "percentiles", "hedged-requests", "coordinated-omission"},
		bad:      []string{"coordinated-omission", "hedged-requests", "percentiles", "fan-out"},
	},
	{
		text:     "How do hedged requests reduce tail latency?",
		answer:   "They send a second copy of a slow request to another replica and use whichever reply arrives first.",
		dialect:  dialectProject,
		relevant: []string{"hedged-requests"},
		good:     []string{"hedged-requests", "percentiles", "fan-out", "batch"},
		bad:      []string{"batch", "percentiles", "fan-out", "hedged-requests"},
	},
	{
		text:     "How does a ParentBased sampler decide whether to record a child span?",
		answer:   "It copies the parent's sampled flag, carried in the trace-flags of the traceparent header.",
		dialect:  dialectOpenInference,
		relevant: []string{"parent-based"},
		good:     []string{"parent-based", "head-sampling", "tail-sampling", "pipelines"},
		bad:      []string{"tail-sampling", "pipelines", "head-sampling", "parent-based"},
	},
	{
		text:     "How does histogram_quantile estimate a quantile from Prometheus histogram buckets?",
		answer:   "It finds the bucket where the requested rank falls and interpolates linearly between its lower and upper bounds.",
		dialect:  dialectGenAI,
		relevant: []string{"histogram-quantile", "histogram-buckets"},
		good:     []string{"histogram-quantile", "alerting", "histogram-buckets", "percentiles"},
		bad:      []string{"alerting", "percentiles", "histogram-buckets", "histogram-quantile"},
	},
	{
		text:     "What does Contextual Precision reward in a retrieval?",
		answer:   "Relevant chunks ranked above irrelevant ones; the same chunks ranked lower score less.",
		dialect:  dialectProject,
		relevant: []string{"contextual-precision"},
		good:     []string{"contextual-precision", "chunking", "percentiles", "histogram-buckets"},
		bad:      []string{"chunking", "histogram-buckets", "percentiles", "contextual-precision"},
	},
	{
		text:     "Which port does the Collector's health_check extension listen on by default?",
		answer:   "Port 13133.",
		dialect:  dialectOpenInference,
		relevant: []string{"health-check"},
		good:     []string{"health-check", "pipelines", "memory-limiter", "batch"},
		bad:      []string{"pipelines", "batch", "memory-limiter", "health-check"},
	},
}

// texts returns the chunk texts of ids, in order.
func texts(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = chunks[id]
	}
	return out
}
