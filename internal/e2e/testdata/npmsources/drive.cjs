// Drives the real client libraries, instrumented by their real
// OpenTelemetry instrumentations, against the local services the Go test
// (internal/e2e/npmsources_test.go) starts, and exports the spans over
// OTLP/HTTP. Each source runs inside a root span that carries the trace's
// answer, as an application's own workflow span would; what happens inside
// is only what the libraries and instrumentations do.
"use strict";

const api = require("@opentelemetry/api");
const { NodeTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-node");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { resourceFromAttributes } = require("@opentelemetry/resources");

const chromadb = require("chromadb");
const { ChromaDBInstrumentation } = require("@traceloop/instrumentation-chromadb");
const pinecone = require("@pinecone-database/pinecone");
const { PineconeInstrumentation } = require("@traceloop/instrumentation-pinecone");
const bedrock = require("@aws-sdk/client-bedrock-agent-runtime");
const { BedrockAgentInstrumentation } = require("@arizeai/openinference-instrumentation-bedrock-agent-runtime");
const llamaindex = require("llamaindex");
const { LlamaIndexInstrumentation } = require("@traceloop/instrumentation-llamaindex");
const qdrant = require("@qdrant/js-client-rest");
const { QdrantInstrumentation } = require("@traceloop/instrumentation-qdrant");
const cohere = require("cohere-ai");
const { CohereInstrumentation } = require("@traceloop/instrumentation-cohere");

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "npm-sources" }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: env("OTLP_TRACES_URL") }))],
});
provider.register();
const tracer = api.trace.getTracer("npm-sources-app");

// Instrumentations are applied to the modules this script loaded, as the
// Traceloop SDK's instrumentModules option and OpenInference's
// manuallyInstrument do; content tracing is on, as by default.
for (const [instrumentation, module] of [
  [new ChromaDBInstrumentation({ traceContent: true }), chromadb],
  [new PineconeInstrumentation(), pinecone],
  [new BedrockAgentInstrumentation(), bedrock],
  [new LlamaIndexInstrumentation({ traceContent: true }), llamaindex],
  [new QdrantInstrumentation({ traceContent: true }), qdrant],
  [new CohereInstrumentation({ traceContent: true }), cohere],
]) {
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(module);
}

const corpus = JSON.parse(env("CORPUS")); // {question, answer, chunks: {name: text}}

// inWorkflow runs fn inside the application's root span, which ends with
// the trace's answer on it: traceloop.entity.output for the OpenLLMetry
// sources, output.value for OpenInference.
async function inWorkflow(name, answerAttributes, fn) {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      await fn();
      span.setAttributes(answerAttributes);
    } catch (err) {
      span.recordException(err);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

const traceloopWorkflow = (answer) => ({
  "traceloop.span.kind": "workflow",
  "traceloop.entity.output": JSON.stringify(answer),
});

// Chroma: add documents with their embeddings, query by an embedding (the
// service ranks by distance), get and delete by id.
async function chroma() {
  const client = new chromadb.ChromaClient({ path: env("CHROMA_URL") });
  const embeddingFunction = { generate: async (texts) => texts.map(() => [0, 0]) };
  const collection = await client.getOrCreateCollection({ name: "capitals", embeddingFunction });
  const docs = JSON.parse(env("CHROMA_DOCS")); // [{id, text, embedding}]
  await collection.add({
    ids: docs.map((d) => d.id),
    documents: docs.map((d) => d.text),
    embeddings: docs.map((d) => d.embedding),
  });
  await client.listCollections();
  await collection.get({ ids: [docs[0].id] });
  const res = await collection.query({ queryEmbeddings: [JSON.parse(env("CHROMA_QUERY"))], nResults: 3 });
  await collection.delete({ ids: [docs[docs.length - 1].id] });
  return res;
}

// Pinecone: upsert records with their text in metadata.text (as
// LangChain's and LlamaIndex's Pinecone stores keep it), query by vector
// with metadata, delete.
async function pineconeSource() {
  const pc = new pinecone.Pinecone({ apiKey: "pc-e2e", controllerHostUrl: env("PINECONE_URL") });
  const index = pc.index("capitals", env("PINECONE_URL"));
  const docs = JSON.parse(env("PINECONE_DOCS"));
  await index.upsert({
    records: docs.map((d) => ({ id: d.id, values: d.embedding, metadata: { text: d.text, source: "wiki" } })),
  });
  const res = await index.query({ vector: JSON.parse(env("PINECONE_QUERY")), topK: 3, includeMetadata: true });
  await index.deleteMany({ ids: [docs[docs.length - 1].id] });
  return res;
}

// Bedrock Knowledge Bases: Retrieve, and RetrieveAndGenerate, whose
// references are the answer's citations.
async function bedrockSource() {
  const client = new bedrock.BedrockAgentRuntimeClient({
    region: "us-east-1",
    endpoint: env("BEDROCK_URL"),
    credentials: { accessKeyId: "AKIDE2E", secretAccessKey: "e2e-secret" },
  });
  await client.send(new bedrock.RetrieveCommand({
    knowledgeBaseId: "KBE2E00001",
    retrievalQuery: { text: corpus.question },
    retrievalConfiguration: { vectorSearchConfiguration: { numberOfResults: 3 } },
  }));
  await client.send(new bedrock.RetrieveAndGenerateCommand({
    input: { text: corpus.question },
    retrieveAndGenerateConfiguration: {
      type: "KNOWLEDGE_BASE",
      knowledgeBaseConfiguration: {
        knowledgeBaseId: "KBE2E00001",
        modelArn: "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
      },
    },
  }));
}

// An embedding model that embeds each known text as the test says, and a
// model that answers with the trace's answer: the index, the retriever
// and the query engine are LlamaIndex's own.
class TableEmbedding extends llamaindex.BaseEmbedding {
  constructor(table) {
    super();
    this.table = table;
  }
  async getTextEmbedding(text) {
    const v = this.table[text.trim()];
    if (!v) throw new Error(`no embedding for ${JSON.stringify(text)}`);
    return v;
  }
}

class AnsweringLLM extends llamaindex.BaseLLM {
  constructor(answer) {
    super();
    this.answer = answer;
  }
  get metadata() {
    return { model: "e2e-answerer", temperature: 0, topP: 1, contextWindow: 8192, tokenizer: undefined };
  }
  async chat(params) {
    if (params.stream) throw new Error("not streaming");
    return { message: { role: "assistant", content: this.answer }, raw: null };
  }
}

async function llamaIndexSource() {
  const docs = JSON.parse(env("LLAMAINDEX_DOCS"));
  const table = Object.fromEntries(docs.map((d) => [d.text, d.embedding]));
  table[corpus.question] = JSON.parse(env("LLAMAINDEX_QUERY"));
  llamaindex.Settings.embedModel = new TableEmbedding(table);
  llamaindex.Settings.llm = new AnsweringLLM(corpus.answer);
  const index = await llamaindex.VectorStoreIndex.fromDocuments(
    docs.map((d) => new llamaindex.Document({ text: d.text, id_: d.id })),
  );
  const engine = index.asQueryEngine({ similarityTopK: docs.length });
  return engine.query({ query: corpus.question });
}

// Qdrant: upsert points with a payload in the given layout, search by
// vector (the service ranks by cosine similarity), retrieve and delete by
// id. LangChain.js's QdrantVectorStore (whose 0.1.0-0.1.2 releases call
// search) keeps a point's text in payload.content and its metadata in
// payload.metadata, under a UUID; a plain application keeps payload.text.
async function qdrantSource(collection, docs, payload) {
  const client = new qdrant.QdrantClient({ url: env("QDRANT_URL"), checkCompatibility: false });
  await client.upsert(collection, {
    wait: true,
    points: docs.map((d) => ({ id: d.id, vector: d.embedding, payload: payload(d) })),
  });
  await client.search(collection, { vector: JSON.parse(env("QDRANT_QUERY")), limit: 3, with_payload: true });
  await client.retrieve(collection, { ids: [docs[0].id], with_payload: true });
  await client.delete(collection, { wait: true, points: [docs[docs.length - 1].id] });
}

// Cohere: rerank the documents for the question with the v1 client, with
// the ranked documents returned (or not), then chat and generate with it.
async function cohereSource(returnDocuments) {
  const client = new cohere.CohereClient({ token: "co-e2e", environment: env("COHERE_URL") });
  await client.rerank({
    model: "rerank-english-v3.0",
    query: corpus.question,
    documents: JSON.parse(env("COHERE_DOCS")),
    topN: 3,
    returnDocuments,
  });
  if (!returnDocuments) return;
  await client.chat({ model: "command-r", message: corpus.question });
  await client.generate({ prompt: corpus.question });
}

// Cohere's v2 client: its chat and rerank go to the v2 API through a
// client of their own, which the instrumentation does not wrap.
async function cohereV2Source() {
  const client = new cohere.CohereClientV2({ token: "co-e2e", environment: env("COHERE_URL") });
  await client.rerank({ model: "rerank-v3.5", query: corpus.question, documents: JSON.parse(env("COHERE_DOCS")), topN: 3 });
  await client.chat({ model: "command-r", messages: [{ role: "user", content: corpus.question }] });
}

async function main() {
  const only = process.env.SOURCES
    ? process.env.SOURCES.split(",")
    : ["chroma", "pinecone", "bedrock", "llamaindex", "qdrant", "cohere"];
  const workflows = {
    chroma: () => inWorkflow("workflow chroma", traceloopWorkflow(corpus.answer), chroma),
    pinecone: () => inWorkflow("workflow pinecone", traceloopWorkflow(corpus.answer), pineconeSource),
    bedrock: () => inWorkflow("workflow bedrock", { "openinference.span.kind": "CHAIN", "output.value": corpus.answer }, bedrockSource),
    // The query engine's own span is this trace's root, as in an
    // application that calls it directly.
    llamaindex: llamaIndexSource,
    qdrant: async () => {
      await inWorkflow("workflow qdrant langchain", traceloopWorkflow(corpus.answer), () =>
        qdrantSource("langchain", JSON.parse(env("QDRANT_LANGCHAIN_DOCS")), (d) => ({ content: d.text, metadata: { source: "wiki" } })));
      await inWorkflow("workflow qdrant text", traceloopWorkflow(corpus.answer), () =>
        qdrantSource("plain", JSON.parse(env("QDRANT_TEXT_DOCS")), (d) => ({ text: d.text, source: "wiki" })));
    },
    cohere: async () => {
      await inWorkflow("workflow cohere", traceloopWorkflow(corpus.answer), () => cohereSource(true));
      await inWorkflow("workflow cohere without documents", traceloopWorkflow(corpus.answer), () => cohereSource(false));
      await inWorkflow("workflow cohere v2", traceloopWorkflow(corpus.answer), cohereV2Source);
    },
  };
  for (const name of only) {
    await workflows[name]();
  }
  await provider.forceFlush();
  await provider.shutdown();
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
