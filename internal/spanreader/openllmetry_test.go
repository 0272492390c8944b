package spanreader

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzOpenLLMetry: entity outputs and inputs, query result events,
// Pinecone's match metadata events and Qdrant's payloads.
func FuzzOpenLLMetry(f *testing.F) {
	seeds(f)
	// Cohere reranks with their input documents.
	f.Add("", "Bananas.", "Paris.", uint8(1), uint8(64+16+3))
	f.Add("", "Bananas.", "Paris.", uint8(7), uint8(64+16+2))
	f.Fuzz(func(t *testing.T, output, input, doc string, kind, events uint8) {
		s := ptrace.NewSpan()
		putFuzzed(s.Attributes(), "traceloop.entity.output", kind, output)
		putFuzzed(s.Attributes(), "traceloop.entity.input", kind/6, input)
		putFuzzed(s.Attributes(), "db.query.text", kind/36, input)
		if events&64 != 0 {
			// A model call, or (kind odd) a rerank, whose output ranking
			// is in the completions.
			requestType := "chat"
			if kind&1 != 0 {
				requestType = "rerank"
			}
			s.Attributes().PutStr("llm.request.type", requestType)
			putFuzzed(s.Attributes(), "gen_ai.prompt.0.user", kind/6, input)
		}
		if events&128 != 0 {
			s.SetParentSpanID(pcommon.SpanID{1})
		}
		for i := range int(events % 12) {
			e := s.Events().AppendEmpty()
			e.SetName("db.query.result")
			putFuzzed(e.Attributes(), "db.query.result.document", kind, doc)
			// Pinecone's JavaScript instrumentation: a metadata event per
			// match, under any index.
			if events&32 != 0 {
				s.Events().AppendEmpty().SetName("pinecone.query.result")
				m := s.Events().AppendEmpty()
				m.SetName("pinecone.query.result." + strconv.Itoa(i*int(kind)) + ".metadata")
				putFuzzed(m.Attributes(), "text", kind/6, doc)
			}
			// Qdrant's JavaScript instrumentation: a payload per match
			// on the span, under any index.
			if events&16 != 0 {
				putFuzzed(s.Attributes(), "db.vector.query.result."+strconv.Itoa(i*int(kind))+".metadata", kind/6, doc)
				putFuzzed(s.Attributes(), "gen_ai.completion."+strconv.Itoa(i*int(kind))+".content", kind/36, doc)
				// A Cohere rerank's input documents.
				putFuzzed(s.Attributes(), "documents."+strconv.Itoa(i)+".index", kind/6, input)
			}
		}
		check(t, Keys{}, fuzzLimits, s)
	})
}

// A model call's entity output is its answer: it is not looked into for
// documents, in whichever dialect the span says it is a model call, and
// query result events on it make no retrieval either (no instrumentation
// records both on one span).
func TestModelCallOutputsAreNotDocuments(t *testing.T) {
	r := New(Keys{}, limits)
	docs := `[{"page_content": "Paris is the capital of France."}]`
	for name, mark := range map[string]func(pcommon.Map){
		"openllmetry":   func(m pcommon.Map) { m.PutStr("llm.request.type", "chat") },
		"gen_ai":        func(m pcommon.Map) { m.PutStr("gen_ai.operation.name", "chat") },
		"openinference": func(m pcommon.Map) { m.PutStr("openinference.span.kind", "LLM") },
	} {
		s := newSpan()
		mark(s.Attributes())
		s.Attributes().PutStr("traceloop.entity.output", docs)
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s model call recognised as %q", name, d)
		}
		if a, ok := r.TraceAnswer(s); !ok || a.Text != docs {
			t.Errorf("%s model call: answer %q %v", name, a.Text, ok)
		}
		e := s.Events().AppendEmpty()
		e.SetName("db.query.result")
		e.Attributes().PutStr("db.query.result.document", "Paris is the capital of France.")
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s model call with query results recognised as %q", name, d)
		}
	}
}

// Outputs are judged by their first and last bytes before they are read:
// only JSON can hold documents, and JSON cut short cannot be read.
func TestOutputShape(t *testing.T) {
	r := New(Keys{}, Limits{MaxChunks: 10, MaxBytes: 64})
	long := `{"documents": [{"page_content": "` + strings.Repeat("x", 64) + `"}]}`
	for out, want := range map[string]bool{
		`  [{"page_content": "a"}]  `:                  true,
		`[{"page_content": "a"}`:                       false, // cut short
		`{"documents": [{"page_content": "a"}]`:        false,
		`page_content: a`:                              false,
		long:                                           true, // too large to read: passes as too_large
		long[:len(long)-1]:                             true,
		"text mentioning page_content " + long:         false, // not JSON, however long
		`{"documents": [{"text": "no page content"}]}`: false,
	} {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.output", out)
		if _, ok := r.Recognise(s); ok != want {
			t.Errorf("%.50q: recognised %v, want %v", out, ok, want)
		}
	}
}

func TestMentionsDocuments(t *testing.T) {
	for _, s := range []string{"", "_", "page_content", "xpage_contentx", "page_conten", "age_content", "__page_content", "page__content",
		"_page_content_", strings.Repeat("_", 100) + "page_content", strings.Repeat("page_", 30), "page_contenpage_content"} {
		if got, want := mentionsDocuments(s), strings.Contains(s, "page_content"); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// jsonContainer trims as strings.TrimSpace does, whichever end has the
// white space, Unicode spaces included.
func TestJSONContainer(t *testing.T) {
	for _, s := range []string{"", " ", "[]", " [] ", "\t{}\n", "{} ", "\u00a0[1]\u00a0", "[1]\u3000", "x", " x", "\u00a0x", "]", "{", "é[", "[é"} {
		trimmed := strings.TrimSpace(s)
		want := trimmed != "" && (trimmed[0] == '[' || trimmed[0] == '{')
		got, ok := jsonContainer(s)
		if ok != want || (ok && got != trimmed) {
			t.Errorf("%q: %q %v, want %q %v", s, got, ok, trimmed, want)
		}
	}
}

// resultEvent appends a db.query.result event with the given attributes.
func resultEvent(s ptrace.Span, attrs map[string]any) {
	e := s.Events().AppendEmpty()
	e.SetName("db.query.result")
	if err := e.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
}

// Vector-store query spans as OpenLLMetry's instrumentations record them
// (shapes from their code, and for Chroma's JavaScript one from
// TestNPMInstrumentations): the documents' text in rank order, and the
// query where the span carries one.
func TestVectorStoreQueryResults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(ptrace.Span)
		want  []string
	}{
		{"chroma python: an event per result", func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "chroma")
			s.Attributes().PutStr("db.operation", "query")
			for i, d := range []string{"doc one", "doc two", "doc three"} {
				resultEvent(s, map[string]any{"db.query.result.id": string(rune('1' + i)), "db.query.result.distance": float64(i), "db.query.result.document": d})
			}
		}, []string{"doc one", "doc two", "doc three"}},
		{"chroma python: a result without a document keeps its rank", func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.id": "1", "db.query.result.document": "doc one"})
			resultEvent(s, map[string]any{"db.query.result.id": "2"})
			resultEvent(s, map[string]any{"db.query.result.id": "3", "db.query.result.document": "doc three"})
		}, []string{"doc one", "", "doc three"}},
		{"chroma javascript: an event per query, its documents a JSON array", func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "ChromaDB")
			s.Attributes().PutStr("db.chroma.query.n_results", "3")
			resultEvent(s, map[string]any{"db.query.result.id": `["a","b","c"]`, "db.query.result.distance": "[0.1,0.2,0.3]",
				"db.query.result.metadata": "[null,null,null]", "db.query.result.vector": "[]",
				"db.query.result.document": `["doc one","doc \"two\"",null]`})
		}, []string{"doc one", `doc "two"`, ""}},
		{"javascript, two queries: their results in order", func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.document": `["q1 first","q1 second"]`})
			resultEvent(s, map[string]any{"db.query.result.document": `["q2 first"]`})
		}, []string{"q1 first", "q1 second", "q2 first"}},
		{"an array of documents", func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.document": []any{"doc one", "doc two"}})
		}, []string{"doc one", "doc two"}},
		{"a document that only looks like an array is text", func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.document": `[1] Paris is the capital of France.`})
		}, []string{`[1] Paris is the capital of France.`}},
	} {
		s := newSpan()
		tc.build(s)
		d, ret, err := read(t, New(Keys{}, limits), s)
		if d != DialectOpenLLMetry || err != nil || !reflect.DeepEqual(ret.Chunks, tc.want) {
			t.Errorf("%s: %q %q %v, want %q", tc.name, d, ret.Chunks, err, tc.want)
		}
	}
}

// Query result spans that carry no document's text, and the other
// operations of the vector stores, are never candidates: their shapes
// copied from the instrumentations' code.
func TestVectorStoreSpansWithoutText(t *testing.T) {
	r := New(Keys{}, limits)
	for name, build := range map[string]func(ptrace.Span){
		"chroma javascript, documents not included": func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.id": `["a"]`, "db.query.result.document": `[]`})
		},
		"chroma javascript, null documents": func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.id": `["a","b"]`, "db.query.result.document": `[null,null]`})
		},
		"chroma add": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "chroma")
			s.Attributes().PutStr("db.operation", "add")
			s.Attributes().PutInt("db.chroma.add.documents_count", 3)
		},
		"pinecone python: id, score, metadata as Python's repr": func(s ptrace.Span) {
			resultEvent(s, map[string]any{"db.query.result.id": "a", "db.query.result.score": 0.9,
				"db.query.result.metadata": "{'text': 'Paris is the capital of France.'}", "db.query.result.vector": []any{0.1, 0.2}})
		},
		"milvus query: a row's fields": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "milvus")
			resultEvent(s, map[string]any{"id": int64(1), "color_tag": "brown"})
		},
		"milvus search: entities as Python's repr": func(s ptrace.Span) {
			e := s.Events().AppendEmpty()
			e.SetName("db.search.result")
			_ = e.Attributes().FromRaw(map[string]any{"db.search.result.query_id": int64(0), "db.search.result.id": "1",
				"db.search.result.distance": "0.1", "db.search.result.entity": "{'text': 'Paris is the capital of France.'}"})
		},
		"marqo search: a hit's fields": func(s ptrace.Span) {
			s.Attributes().PutStr("db.marqo.search.query", "capital of France")
			resultEvent(s, map[string]any{"_id": "a", "_score": 0.9, "Title": "Paris"})
		},
		"azure ai search upload: the uploaded documents": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "Azure AI Search")
			s.Attributes().PutStr("db.query.result.document.0", `{"id": "1", "description": "Paris is the capital of France."}`)
			s.Attributes().PutStr("db.query.result.id.0", "1")
		},
		"azure ai search get_document": func(s ptrace.Span) {
			s.Attributes().PutStr("db.query.result.document", `{"id": "1", "description": "Paris is the capital of France."}`)
		},
		"qdrant javascript search: payloads without text": func(s ptrace.Span) {
			qdrantSearch(s, `{"source": "wiki"}`, `{"content": 7}`)
		},
		"qdrant javascript search: with_payload false": func(s ptrace.Span) {
			qdrantSearch(s)
			s.Attributes().PutStr("db.vector.query.result.0.id", "paris")
			s.Attributes().PutDouble("db.vector.query.result.0.score", 0.9)
		},
		"qdrant javascript upsert": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "Qdrant")
			s.Attributes().PutStr("db.vector.table_name", "capitals")
			s.Attributes().PutInt("db.vector.add.count", 2)
		},
		"qdrant javascript retrieve": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "Qdrant")
			s.Attributes().PutStr("db.vector.table_name", "capitals")
			s.Attributes().PutStr("db.vector.get.ids", `["paris"]`)
			s.Attributes().PutInt("db.vector.get.count", 1)
		},
		"qdrant javascript delete": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "Qdrant")
			s.Attributes().PutStr("db.vector.table_name", "capitals")
			s.Attributes().PutStr("db.vector.delete.selector", `{"points":["paris"]}`)
		},
		"pinecone javascript query without metadata": func(s ptrace.Span) {
			s.Events().AppendEmpty().SetName("pinecone.query.result")
			s.Events().AppendEmpty().SetName("pinecone.query.result.0")
		},
		"pinecone javascript metadata without text": func(s ptrace.Span) {
			s.Events().AppendEmpty().SetName("pinecone.query.result")
			e := s.Events().AppendEmpty()
			e.SetName("pinecone.query.result.0.metadata")
			e.Attributes().PutStr("source", "wiki")
		},
		"pinecone upsert": func(s ptrace.Span) { s.Attributes().PutStr("db.system", "Pinecone") },
		"lancedb search: the query builder": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "lancedb")
			s.Attributes().PutStr("db.operation", "search")
			s.Attributes().PutStr("db.milvus.search.filter", "capital of France")
		},
		"weaviate query: the call's arguments": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "weaviate")
			s.Attributes().PutStr("db.operation", "fetch_objects")
			s.Attributes().PutStr("db.weaviate.collections.query.fetch_objects.limit", "3")
		},
		"azure ai search search": func(s ptrace.Span) {
			s.Attributes().PutStr("db.system", "Azure AI Search")
			s.Attributes().PutStr("azure_search.search.text", "capital of France")
			s.Attributes().PutInt("azure_search.search.results_count", 3)
		},
	} {
		s := newSpan()
		build(s)
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s: recognised as %q", name, d)
		}
	}
}

// Pinecone's JavaScript instrumentation: a metadata event per match, in
// the order of the matches; a match without metadata keeps its rank.
func TestPineconeMatches(t *testing.T) {
	s := newSpan()
	s.Attributes().PutStr("db.system", "Pinecone")
	s.Attributes().PutInt("db.vector.query.result.matches_length", 3)
	s.Events().AppendEmpty().SetName("pinecone.query.request")
	s.Events().AppendEmpty().SetName("pinecone.query.result")
	for i, text := range []string{"first", "", "third"} {
		s.Events().AppendEmpty().SetName("pinecone.query.result." + string(rune('0'+i)))
		if text == "" {
			continue
		}
		e := s.Events().AppendEmpty()
		e.SetName("pinecone.query.result." + string(rune('0'+i)) + ".metadata")
		e.Attributes().PutStr("source", "wiki")
		e.Attributes().PutStr("text", text)
	}
	d, ret, err := read(t, New(Keys{}, limits), s)
	if d != DialectOpenLLMetry || err != nil || !reflect.DeepEqual(ret.Chunks, []string{"first", "", "third"}) {
		t.Fatalf("%q %q %v", d, ret.Chunks, err)
	}
	for field, want := range map[string]bool{"text": true, "chunk_text": true, "content": true, "page_content": true, "body": false} {
		s := newSpan()
		e := s.Events().AppendEmpty()
		e.SetName("pinecone.query.result")
		e = s.Events().AppendEmpty()
		e.SetName("pinecone.query.result.0.metadata")
		e.Attributes().PutStr(field, "Paris")
		if _, ok := New(Keys{}, limits).Recognise(s); ok != want {
			t.Errorf("text in %s: recognised %v, want %v", field, ok, want)
		}
	}
}

// qdrantSearch gives s the shape of a qdrant.search span of Qdrant's
// JavaScript instrumentation (@traceloop/instrumentation-qdrant 0.27.0):
// each match's payload as JSON in db.vector.query.result.{i}.metadata on
// the span, and events without attributes.
func qdrantSearch(s ptrace.Span, payloads ...string) {
	a := s.Attributes()
	a.PutStr("db.system", "Qdrant")
	a.PutStr("db.vector.table_name", "capitals")
	a.PutStr("db.vector.query.embeddings.vector", "[1,0]")
	a.PutInt("db.vector.query.result.matches_length", int64(len(payloads)))
	s.Events().AppendEmpty().SetName("qdrant.search.request")
	s.Events().AppendEmpty().SetName("qdrant.search.result")
	for i, p := range payloads {
		s.Events().AppendEmpty().SetName("qdrant.search.result." + strconv.Itoa(i))
		a.PutDouble("db.vector.query.result."+strconv.Itoa(i)+".score", 0.9)
		a.PutInt("db.vector.query.result."+strconv.Itoa(i)+".id", int64(i+1))
		if p != "" {
			a.PutStr("db.vector.query.result."+strconv.Itoa(i)+".metadata", p)
		}
	}
}

// Qdrant's JavaScript instrumentation: the payloads are read as Pinecone's
// metadata is, in LangChain.js's QdrantVectorStore layout ({content,
// metadata}) and with the text under text, chunk_text or page_content; a
// match without a payload, or without text in it, keeps its rank.
func TestQdrantMatches(t *testing.T) {
	r := New(Keys{}, limits)
	for name, tc := range map[string]struct {
		payloads []string
		want     []string
	}{
		"langchain.js layout": {
			[]string{`{"content":"Paris is the capital.","metadata":{"source":"wiki"}}`, `{"content":"Bananas.","metadata":{}}`},
			[]string{"Paris is the capital.", "Bananas."},
		},
		"plain text layout, a match without payload": {
			[]string{`{"source":"wiki","text":"first"}`, "", `{"text":"th\u0069rd"}`},
			[]string{"first", "", "third"},
		},
		"other text fields, text first": {
			[]string{`{"chunk_text":"a"}`, `{"page_content":"b"}`, `{"content":"c","text":"t"}`, `{"text":5}`},
			[]string{"a", "b", "t", ""},
		},
	} {
		s := newSpan()
		qdrantSearch(s, tc.payloads...)
		d, ret, err := read(t, r, s)
		if d != DialectOpenLLMetry || err != nil || !reflect.DeepEqual(ret.Chunks, tc.want) {
			t.Errorf("%s: %q %q %v", name, d, ret.Chunks, err)
		}
		if ret.Query != "" {
			t.Errorf("%s: query %q, but the span carries only the vector", name, ret.Query)
		}
	}
	// Ranks are read in order whatever the order of the attributes, and
	// top_k keeps the first.
	s := newSpan()
	s.Attributes().PutStr("db.vector.query.result.1.metadata", `{"text":"second"}`)
	s.Attributes().PutStr("db.vector.query.result.0.metadata", `{"text":"first"}`)
	s.Attributes().PutStr("db.vector.query.result.01.metadata", `{"text":"not a rank"}`)
	_, ret, err := read(t, New(Keys{}, Limits{TopK: 1, MaxChunks: 10, MaxBytes: 1 << 20}), s)
	if err != nil || !reflect.DeepEqual(ret.Chunks, []string{"first"}) {
		t.Errorf("top_k 1: %q %v", ret.Chunks, err)
	}
	// A payload past the byte limit is too_large, not skipped.
	big := newSpan()
	qdrantSearch(big, `{"text":"`+strings.Repeat("x", 200)+`"}`)
	if _, _, err := read(t, New(Keys{}, Limits{MaxChunks: 10, MaxBytes: 100}), big); err != ErrTooLarge {
		t.Errorf("large payload: %v, want ErrTooLarge", err)
	}
}

// LlamaIndex.TS with OpenLLMetry: a retriever's span holds its
// NodeWithScore list in traceloop.entity.output and its query as the first
// argument in traceloop.entity.input; the query engine's span is no
// retrieval, and gives the trace's answer.
func TestLlamaIndexSpans(t *testing.T) {
	node := func(text string, score float64) string {
		return `{"node":{"id_":"n","metadata":{},"excludedEmbedMetadataKeys":[],"excludedLlmMetadataKeys":[],"relationships":{"SOURCE":{"nodeId":"a","metadata":{},"hash":"h"}},` +
			`"text":"` + text + `","textTemplate":"","endCharIdx":7,"metadataSeparator":"\n","type":"TEXT","hash":"h"},"score":` + strconv.FormatFloat(score, 'f', -1, 64) + `}`
	}
	nodes := "[" + node("Paris is the capital of France.", 0.9) + "," + node("Bananas are yellow.", 0.8) + "]"
	r := New(Keys{}, limits)
	retriever := newSpan()
	retriever.Attributes().PutStr("traceloop.span.kind", "task")
	retriever.Attributes().PutStr("traceloop.entity.input", `{"args":["What is the capital of France?"],"kwargs":{}}`)
	retriever.Attributes().PutStr("traceloop.entity.output", nodes)
	d, ret, err := read(t, r, retriever)
	if d != DialectOpenLLMetry || err != nil || ret.Query != "What is the capital of France?" ||
		!reflect.DeepEqual(ret.Chunks, []string{"Paris is the capital of France.", "Bananas are yellow."}) {
		t.Fatalf("retriever: %q %+v %v", d, ret, err)
	}
	// A short list is recognised by the shape of its start, a long one by
	// confirm.
	short := newSpan()
	short.Attributes().PutStr("traceloop.entity.output", `[ {"node": {"text": "Paris"}, "score": 1} ]`)
	if _, ok := r.Recognise(short); !ok {
		t.Error("short node list not recognised")
	}

	engineOutput := `{"metadata":{},"message":{"content":"The capital of France is Paris.","role":"assistant"},"raw":null,"sourceNodes":` + nodes + `,"stream":false}`
	for name, attrs := range map[string]map[string]any{
		"retriever_query_engine.query": {"traceloop.span.kind": "workflow", "traceloop.workflow.name": "retriever_query_engine.query",
			"traceloop.entity.input": `{"args":[],"kwargs":{"query":"What is the capital of France?"}}`, "traceloop.entity.output": engineOutput},
		"compact_and_refine.synthesize": {"traceloop.span.kind": "task",
			"traceloop.entity.input": `{"args":[],"kwargs":{"query":{"query":"What is the capital of France?"},"nodes":` + nodes + `}}`, "traceloop.entity.output": engineOutput},
		"base_embedding.get_query_embedding": {"traceloop.span.kind": "task",
			"traceloop.entity.input": `{"args":[],"kwargs":{"type":"text","text":"What is the capital of France?"}}`, "traceloop.entity.output": "[1,0]"},
	} {
		s := newSpan()
		_ = s.Attributes().FromRaw(attrs)
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s recognised as %q", name, d)
		}
		if name == "retriever_query_engine.query" {
			s.SetParentSpanID(pcommon.SpanID{})
			if a, ok := r.TraceAnswer(s); !ok || a.Text != "The capital of France is Paris." {
				t.Errorf("query engine's answer %q %v", a.Text, ok)
			}
		}
	}
}

// The first positional argument is the query only in a valid JSON text,
// and only when no query field comes first.
func TestFirstArgument(t *testing.T) {
	for in, want := range map[string]string{
		`{"args":["q"],"kwargs":{}}`:             "q",
		`{"args":[{"query":"q"}]}`:               "q",
		`{"args":[],"kwargs":{"query":"kw"}}`:    "kw",
		`{"args":["a"],"args":["b"]}`:            "b",
		`{"args":[1,"q"]}`:                       "",
		`{"args":["q"]`:                          "",
		`{"args":"q"}`:                           "",
		`["q"]`:                                  "",
		`{"inputs":{"query":"i"},"args":["a"]}`:  "i",
		`{"args":["q\u00e9"],"kwargs":{"x":[]}}`: "qé",
	} {
		s := newSpan()
		s.Attributes().PutStr("traceloop.entity.input", in)
		if got := New(Keys{}, limits).traceloopQuery(s.Attributes()); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// Query results are read within the limits: TopK cuts them, more than
// MaxChunks (after TopK) or MaxBytes is too large.
func TestQueryResultLimits(t *testing.T) {
	s := newSpan()
	resultEvent(s, map[string]any{"db.query.result.document": `["a","b","c"]`})
	resultEvent(s, map[string]any{"db.query.result.document": "d"})
	for _, tc := range []struct {
		lim  Limits
		want []string
		err  error
	}{
		{Limits{MaxChunks: 10, MaxBytes: 100}, []string{"a", "b", "c", "d"}, nil},
		{Limits{TopK: 2, MaxChunks: 10, MaxBytes: 100}, []string{"a", "b"}, nil},
		{Limits{MaxChunks: 3, MaxBytes: 100}, nil, ErrTooLarge},
		{Limits{TopK: 3, MaxChunks: 3, MaxBytes: 100}, []string{"a", "b", "c"}, nil},
		{Limits{MaxChunks: 10, MaxBytes: 3}, nil, ErrTooLarge},
	} {
		r := New(Keys{}, tc.lim)
		_, ret, err := read(t, r, s)
		if err != tc.err || !reflect.DeepEqual(ret.Chunks, tc.want) {
			t.Errorf("%+v: %q %v, want %q %v", tc.lim, ret.Chunks, err, tc.want, tc.err)
		}
	}
}

// cohereRerank gives s the shape of a cohere.rerank span of OpenLLMetry's
// Cohere instrumentation (@traceloop/instrumentation-cohere 0.27.0): the
// input documents in documents.{i}.index, and per output rank a score and,
// with returnDocuments, the text (with content tracing off, the input
// index as an int instead).
func cohereRerank(s ptrace.Span, query string, input []string, output []any) {
	a := s.Attributes()
	a.PutStr("gen_ai.system", "Cohere")
	a.PutStr("llm.request.type", "rerank")
	a.PutStr("gen_ai.request.model", "rerank-english-v3.0")
	a.PutStr("gen_ai.prompt.0.role", "user")
	a.PutStr("gen_ai.prompt.0.user", query)
	for i, d := range input {
		a.PutStr("documents."+strconv.Itoa(i)+".index", d)
	}
	for i, d := range output {
		a.PutDouble("gen_ai.completion."+strconv.Itoa(i)+".relevanceScore", 0.5)
		switch d := d.(type) {
		case string:
			a.PutStr("gen_ai.completion."+strconv.Itoa(i)+".content", d)
		case int:
			a.PutInt("gen_ai.completion."+strconv.Itoa(i)+".content", int64(d))
		}
	}
}

// A Cohere rerank span is scored on its output ranking (returnDocuments);
// without the output's texts it is no retrieval, and chat and generate
// spans, which carry gen_ai.completion.0.content too, stay model calls.
func TestCohereRerank(t *testing.T) {
	r := New(Keys{}, limits)
	input := []string{"Bananas.", "Paris is the capital.", "Oslo is in Norway."}
	s := newSpan()
	cohereRerank(s, "What is the capital of France?", input, []any{"Paris is the capital.", "Oslo is in Norway."})
	d, ret, err := read(t, r, s)
	if d != DialectOpenLLMetry || err != nil || ret.Query != "What is the capital of France?" ||
		!reflect.DeepEqual(ret.Chunks, []string{"Paris is the capital.", "Oslo is in Norway."}) ||
		!reflect.DeepEqual(ret.RerankInput, []string{"Bananas.", "Paris is the capital."}) {
		t.Fatalf("%q %+v %v", d, ret, err)
	}
	// The input ranking is left out when it is shorter than the output
	// (the span is not of that output) or does not fit beside it; the
	// output is scored all the same.
	short := newSpan()
	cohereRerank(short, "q", input[:1], []any{"Paris is the capital.", "Oslo is in Norway."})
	if _, ret, err := read(t, r, short); err != nil || ret.RerankInput != nil || len(ret.Chunks) != 2 {
		t.Errorf("input shorter than the output: %+v %v", ret, err)
	}
	tight := New(Keys{}, Limits{MaxChunks: 10, MaxBytes: len("What is the capital of France?") + len("Paris is the capital.") + len("Oslo is in Norway.") + 5})
	if _, ret, err := read(t, tight, s); err != nil || ret.RerankInput != nil || len(ret.Chunks) != 2 {
		t.Errorf("input over max_bytes: %+v %v", ret, err)
	}
	for name, build := range map[string]func(ptrace.Span){
		"without returnDocuments": func(s ptrace.Span) { cohereRerank(s, "q", input, []any{nil, nil}) },
		"content tracing off":     func(s ptrace.Span) { cohereRerank(s, "", nil, []any{1, 2}) },
		"chat": func(s ptrace.Span) {
			s.Attributes().PutStr("llm.request.type", "chat")
			s.Attributes().PutStr("gen_ai.prompt.0.user", "What is the capital of France?")
			s.Attributes().PutStr("gen_ai.completion.0.content", "Paris.")
		},
		"completion": func(s ptrace.Span) {
			s.Attributes().PutStr("llm.request.type", "completion")
			s.Attributes().PutStr("gen_ai.prompt.0.user", "What is the capital of France?")
			s.Attributes().PutStr("gen_ai.completion.0.content", "Paris.")
		},
	} {
		s := newSpan()
		build(s)
		if d, ok := r.Recognise(s); ok {
			t.Errorf("%s: recognised as %q", name, d)
		}
	}
}
