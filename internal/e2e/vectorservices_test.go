package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Local stand-ins for the retrieval services the npm client libraries talk
// to (TestNPMInstrumentations): each stores what it is given, ranks as the
// real service does, and answers in the real service's wire format, so
// that the clients and their instrumentations run unchanged.

// storedVector is a record of a vector store.
type storedVector struct {
	id       string
	text     string
	values   []float64
	metadata map[string]any
}

// vectorIndex is the records of one collection or index.
type vectorIndex struct {
	mu      sync.Mutex
	records []storedVector
}

func (x *vectorIndex) add(r storedVector) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.records = slices.DeleteFunc(x.records, func(o storedVector) bool { return o.id == r.id })
	x.records = append(x.records, r)
}

func (x *vectorIndex) remove(ids []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.records = slices.DeleteFunc(x.records, func(o storedVector) bool { return slices.Contains(ids, o.id) })
}

// nearest is the n records closest to q by distance (smallest first), with
// their distances.
func (x *vectorIndex) nearest(q []float64, n int, distance func(a, b []float64) float64) ([]storedVector, []float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	type scored struct {
		r storedVector
		d float64
	}
	all := make([]scored, 0, len(x.records))
	for _, r := range x.records {
		all = append(all, scored{r, distance(q, r.values)})
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	all = all[:min(n, len(all))]
	recs, dists := make([]storedVector, len(all)), make([]float64, len(all))
	for i, s := range all {
		recs[i], dists[i] = s.r, s.d
	}
	return recs, dists
}

func squaredL2(a, b []float64) float64 {
	var s float64
	for i := range min(len(a), len(b)) {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// serviceLog records the requests a fake service was sent, as "METHOD
// /path", for the test to show what the clients did.
type serviceLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *serviceLog) note(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r.Method+" "+r.URL.Path)
}

func (l *serviceLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody decodes a JSON request body into v, answering 400 if it
// cannot.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return false
	}
	return true
}

// fakeChroma answers the Chroma server's v2 HTTP API (the API of the
// chromadb 1.10 JavaScript client) for its default tenant and database:
// identity, collections, add, get, query (nearest by squared L2
// distance, Chroma's default space) and delete.
type fakeChroma struct {
	*httptest.Server
	log         serviceLog
	mu          sync.Mutex
	collections map[string]*vectorIndex // by id
	names       map[string]string       // name -> id
}

func startFakeChroma(t *testing.T) *fakeChroma {
	f := &fakeChroma{collections: map[string]*vectorIndex{}, names: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

const (
	chromaTenant   = "default_tenant"
	chromaDatabase = "default_database"
)

func (f *fakeChroma) collectionJSON(name, id string) map[string]any {
	return map[string]any{"id": id, "name": name, "metadata": nil, "tenant": chromaTenant,
		"database": chromaDatabase, "dimension": nil, "version": 0, "log_position": 0, "configuration_json": map[string]any{}}
}

func (f *fakeChroma) serve(w http.ResponseWriter, r *http.Request) {
	f.log.note(r)
	path := strings.TrimPrefix(r.URL.Path, "/api/v2")
	collections := "/tenants/" + chromaTenant + "/databases/" + chromaDatabase + "/collections"
	switch {
	case path == "/heartbeat":
		writeJSON(w, 200, map[string]any{"nanosecond heartbeat": 1})
	case path == "/version":
		writeJSON(w, 200, "1.0.0")
	case path == "/pre-flight-checks":
		writeJSON(w, 200, map[string]any{"max_batch_size": 5461})
	case path == "/auth/identity":
		writeJSON(w, 200, map[string]any{"user_id": "", "tenant": chromaTenant, "databases": []string{chromaDatabase}})
	case path == "/tenants/"+chromaTenant:
		writeJSON(w, 200, map[string]any{"name": chromaTenant})
	case path == "/tenants/"+chromaTenant+"/databases/"+chromaDatabase:
		writeJSON(w, 200, map[string]any{"id": "00000000-0000-4000-8000-000000000000", "name": chromaDatabase, "tenant": chromaTenant})
	case path == collections && r.Method == http.MethodPost:
		var req struct {
			Name string `json:"name"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		f.mu.Lock()
		id, ok := f.names[req.Name]
		if !ok {
			id = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(f.names)+1)
			f.names[req.Name], f.collections[id] = id, &vectorIndex{}
		}
		f.mu.Unlock()
		writeJSON(w, 200, f.collectionJSON(req.Name, id))
	case path == collections && r.Method == http.MethodGet:
		f.mu.Lock()
		list := []any{}
		for name, id := range f.names {
			list = append(list, f.collectionJSON(name, id))
		}
		f.mu.Unlock()
		writeJSON(w, 200, list)
	case strings.HasPrefix(path, collections+"/") && r.Method == http.MethodPost:
		parts := strings.Split(strings.TrimPrefix(path, collections+"/"), "/")
		f.mu.Lock()
		c, ok := f.collections[parts[0]]
		f.mu.Unlock()
		if !ok || len(parts) != 2 {
			writeJSON(w, 404, map[string]string{"error": "NotFoundError", "message": "collection " + parts[0] + " does not exist"})
			return
		}
		f.collectionOp(w, r, c, parts[1])
	default:
		writeJSON(w, 404, map[string]string{"error": "NotFoundError", "message": "not found: " + r.URL.Path})
	}
}

func (f *fakeChroma) collectionOp(w http.ResponseWriter, r *http.Request, c *vectorIndex, op string) {
	var req struct {
		IDs             []string         `json:"ids"`
		Embeddings      [][]float64      `json:"embeddings"`
		Documents       []string         `json:"documents"`
		Metadatas       []map[string]any `json:"metadatas"`
		QueryEmbeddings [][]float64      `json:"query_embeddings"`
		NResults        int              `json:"n_results"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	switch op {
	case "add", "upsert":
		for i, id := range req.IDs {
			rec := storedVector{id: id}
			if i < len(req.Embeddings) {
				rec.values = req.Embeddings[i]
			}
			if i < len(req.Documents) {
				rec.text = req.Documents[i]
			}
			c.add(rec)
		}
		writeJSON(w, 201, true)
	case "get":
		c.mu.Lock()
		var ids []string
		var docs []any
		var metas []any
		for _, rec := range c.records {
			if len(req.IDs) == 0 || slices.Contains(req.IDs, rec.id) {
				ids, docs, metas = append(ids, rec.id), append(docs, rec.text), append(metas, nil)
			}
		}
		c.mu.Unlock()
		writeJSON(w, 200, map[string]any{"ids": ids, "documents": docs, "metadatas": metas, "embeddings": nil,
			"uris": nil, "data": nil, "included": []string{"metadatas", "documents"}})
	case "query":
		resp := map[string]any{"embeddings": nil, "uris": nil, "data": nil, "included": []string{"metadatas", "documents", "distances"}}
		var ids, docs, metas, dists []any
		for _, q := range req.QueryEmbeddings {
			recs, d := c.nearest(q, req.NResults, squaredL2)
			qi, qd, qm := []string{}, []string{}, []any{}
			for _, rec := range recs {
				qi, qd, qm = append(qi, rec.id), append(qd, rec.text), append(qm, nil)
			}
			ids, docs, metas, dists = append(ids, qi), append(docs, qd), append(metas, qm), append(dists, d)
		}
		resp["ids"], resp["documents"], resp["metadatas"], resp["distances"] = ids, docs, metas, dists
		writeJSON(w, 200, resp)
	case "delete":
		c.remove(req.IDs)
		writeJSON(w, 200, req.IDs)
	default:
		writeJSON(w, 404, map[string]string{"error": "unknown operation " + op})
	}
}

// fakePinecone answers a Pinecone serverless index's data plane: upsert,
// query (highest cosine similarity first, as an index of the cosine
// metric) and delete.
type fakePinecone struct {
	*httptest.Server
	log   serviceLog
	index vectorIndex
}

func startFakePinecone(t *testing.T) *fakePinecone {
	f := &fakePinecone{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePinecone) serve(w http.ResponseWriter, r *http.Request) {
	f.log.note(r)
	if r.Header.Get("Api-Key") == "" {
		writeJSON(w, 401, map[string]string{"message": "missing Api-Key"})
		return
	}
	switch r.URL.Path {
	case "/vectors/upsert":
		var req struct {
			Vectors []struct {
				ID       string         `json:"id"`
				Values   []float64      `json:"values"`
				Metadata map[string]any `json:"metadata"`
			} `json:"vectors"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		for _, v := range req.Vectors {
			f.index.add(storedVector{id: v.ID, values: v.Values, metadata: v.Metadata})
		}
		writeJSON(w, 200, map[string]any{"upsertedCount": len(req.Vectors)})
	case "/query":
		var req struct {
			Vector          []float64 `json:"vector"`
			TopK            int       `json:"topK"`
			IncludeMetadata bool      `json:"includeMetadata"`
			Namespace       string    `json:"namespace"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		recs, d := f.index.nearest(req.Vector, req.TopK, func(a, b []float64) float64 { return -cosine(a, b) })
		matches := []any{}
		for i, rec := range recs {
			m := map[string]any{"id": rec.id, "score": -d[i], "values": []float64{}}
			if req.IncludeMetadata {
				m["metadata"] = rec.metadata
			}
			matches = append(matches, m)
		}
		writeJSON(w, 200, map[string]any{"results": []any{}, "matches": matches, "namespace": req.Namespace,
			"usage": map[string]any{"readUnits": 5}})
	case "/vectors/delete":
		var req struct {
			IDs []string `json:"ids"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		f.index.remove(req.IDs)
		writeJSON(w, 200, map[string]any{})
	default:
		writeJSON(w, 404, map[string]string{"message": "not found: " + r.URL.Path})
	}
}

// kbChunk is a chunk of a Bedrock knowledge base, with the relevance score
// the service's vector search gives it for the test's query.
type kbChunk struct {
	id, text string
	score    float64
}

// fakeBedrockAgentRuntime answers Bedrock Agent Runtime's Retrieve
// (the knowledge base's chunks, highest score first, up to
// numberOfResults) and RetrieveAndGenerate (an answer citing chunks).
type fakeBedrockAgentRuntime struct {
	*httptest.Server
	log    serviceLog
	chunks []kbChunk
	answer string
}

func startFakeBedrockAgentRuntime(t *testing.T, answer string, chunks []kbChunk) *fakeBedrockAgentRuntime {
	f := &fakeBedrockAgentRuntime{chunks: chunks, answer: answer}
	// The client speaks HTTP/2 (with prior knowledge, over plain HTTP to
	// a local endpoint), as it does to the service.
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.Config.Protocols = new(http.Protocols)
	f.Config.Protocols.SetHTTP1(true)
	f.Config.Protocols.SetUnencryptedHTTP2(true)
	f.Start()
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBedrockAgentRuntime) reference(c kbChunk) map[string]any {
	return map[string]any{
		"content":  map[string]any{"text": c.text, "type": "TEXT"},
		"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": "s3://kb-e2e/" + c.id + ".txt"}},
		"metadata": map[string]any{"x-amz-bedrock-kb-chunk-id": c.id, "x-amz-bedrock-kb-source-uri": "s3://kb-e2e/" + c.id + ".txt"},
	}
}

func (f *fakeBedrockAgentRuntime) ranked() []kbChunk {
	ranked := slices.Clone(f.chunks)
	slices.SortStableFunc(ranked, func(a, b kbChunk) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	return ranked
}

func (f *fakeBedrockAgentRuntime) serve(w http.ResponseWriter, r *http.Request) {
	f.log.note(r)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		writeJSON(w, 403, map[string]string{"message": "missing SigV4 signature"})
		return
	}
	w.Header().Set("x-amzn-RequestId", "e2e-request")
	switch {
	case strings.HasPrefix(r.URL.Path, "/knowledgebases/") && strings.HasSuffix(r.URL.Path, "/retrieve"):
		var req struct {
			RetrievalQuery struct {
				Text string `json:"text"`
			} `json:"retrievalQuery"`
			RetrievalConfiguration struct {
				VectorSearchConfiguration struct {
					NumberOfResults int `json:"numberOfResults"`
				} `json:"vectorSearchConfiguration"`
			} `json:"retrievalConfiguration"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		n := req.RetrievalConfiguration.VectorSearchConfiguration.NumberOfResults
		if n == 0 {
			n = 5 // the service's default
		}
		results := []any{}
		for _, c := range f.ranked()[:min(n, len(f.chunks))] {
			ref := f.reference(c)
			ref["score"] = c.score
			results = append(results, ref)
		}
		writeJSON(w, 200, map[string]any{"retrievalResults": results})
	case r.URL.Path == "/retrieveAndGenerate":
		// The answer cites the best chunk, then the second.
		ranked := f.ranked()
		citations := []any{}
		for i, c := range ranked[:min(2, len(ranked))] {
			citations = append(citations, map[string]any{
				"generatedResponsePart": map[string]any{"textResponsePart": map[string]any{
					"text": f.answer, "span": map[string]any{"start": 0, "end": len(f.answer) - 1 - i}}},
				"retrievedReferences": []any{f.reference(c)},
			})
		}
		writeJSON(w, 200, map[string]any{"output": map[string]any{"text": f.answer}, "citations": citations,
			"sessionId": "e2e-session"})
	default:
		writeJSON(w, 404, map[string]string{"message": "UnknownOperationException: " + r.URL.Path})
	}
}

// fakeQdrant answers Qdrant's REST API as @qdrant/js-client-rest 1.18
// calls it: the server version, upsert (PUT .../points), search (highest
// cosine similarity first, as a collection of the Cosine distance),
// retrieve by ids (POST .../points) and delete by ids. Point ids are
// unsigned integers or UUIDs, as in Qdrant; any other id is refused.
type fakeQdrant struct {
	*httptest.Server
	log         serviceLog
	mu          sync.Mutex
	collections map[string]*vectorIndex
}

func startFakeQdrant(t *testing.T) *fakeQdrant {
	f := &fakeQdrant{collections: map[string]*vectorIndex{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// qdrantOK is Qdrant's response envelope.
func qdrantOK(result any) map[string]any {
	return map[string]any{"result": result, "status": "ok", "time": 0.0001}
}

func qdrantError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"status": map[string]any{"error": msg}, "time": 0})
}

// qdrantID is a point id as Qdrant accepts it: an unsigned integer or a
// UUID; it is kept as its JSON text so that it goes back as it came.
func qdrantID(raw json.RawMessage) (string, error) {
	var n uint64
	if json.Unmarshal(raw, &n) == nil {
		return string(raw), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && len(s) == 36 && strings.Count(s, "-") == 4 {
		return string(raw), nil
	}
	return "", fmt.Errorf("unable to parse point id %s: must be an unsigned integer or a UUID", raw)
}

func (f *fakeQdrant) collection(name string) *vectorIndex {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.collections[name]
	if !ok {
		c = &vectorIndex{}
		f.collections[name] = c
	}
	return c
}

func (f *fakeQdrant) serve(w http.ResponseWriter, r *http.Request) {
	f.log.note(r)
	if r.URL.Path == "/" {
		writeJSON(w, 200, map[string]any{"title": "qdrant - vector search engine", "version": "1.18.0"})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/collections/")
	name, op, _ := strings.Cut(rest, "/")
	if !ok || name == "" {
		qdrantError(w, 404, "Not found: "+r.URL.Path)
		return
	}
	c := f.collection(name)
	switch {
	case op == "points" && r.Method == http.MethodPut:
		var req struct {
			Points []struct {
				ID      json.RawMessage `json:"id"`
				Vector  []float64       `json:"vector"`
				Payload map[string]any  `json:"payload"`
			} `json:"points"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		for _, p := range req.Points {
			id, err := qdrantID(p.ID)
			if err != nil {
				qdrantError(w, 400, err.Error())
				return
			}
			c.add(storedVector{id: id, values: p.Vector, metadata: p.Payload})
		}
		writeJSON(w, 200, qdrantOK(map[string]any{"operation_id": 1, "status": "completed"}))
	case op == "points/search" && r.Method == http.MethodPost:
		var req struct {
			Vector      []float64 `json:"vector"`
			Limit       int       `json:"limit"`
			WithPayload bool      `json:"with_payload"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		recs, d := c.nearest(req.Vector, req.Limit, func(a, b []float64) float64 { return -cosine(a, b) })
		result := []any{}
		for i, rec := range recs {
			p := map[string]any{"id": json.RawMessage(rec.id), "version": 0, "score": -d[i]}
			if req.WithPayload {
				p["payload"] = rec.metadata
			}
			result = append(result, p)
		}
		writeJSON(w, 200, qdrantOK(result))
	case op == "points" && r.Method == http.MethodPost:
		var req struct {
			IDs         []json.RawMessage `json:"ids"`
			WithPayload bool              `json:"with_payload"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		result := []any{}
		c.mu.Lock()
		for _, rec := range c.records {
			if slices.ContainsFunc(req.IDs, func(id json.RawMessage) bool { return string(id) == rec.id }) {
				p := map[string]any{"id": json.RawMessage(rec.id)}
				if req.WithPayload {
					p["payload"] = rec.metadata
				}
				result = append(result, p)
			}
		}
		c.mu.Unlock()
		writeJSON(w, 200, qdrantOK(result))
	case op == "points/delete" && r.Method == http.MethodPost:
		var req struct {
			Points []json.RawMessage `json:"points"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		ids := make([]string, len(req.Points))
		for i, p := range req.Points {
			ids[i] = string(p)
		}
		c.remove(ids)
		writeJSON(w, 200, qdrantOK(map[string]any{"operation_id": 2, "status": "completed"}))
	default:
		qdrantError(w, 404, "Not found: "+r.Method+" "+r.URL.Path)
	}
}

// fakeCohere answers Cohere's API for the cohere-ai client: rerank (v1
// and v2: the documents by the relevance the test gives each text, highest
// first, top_n of them, with their texts when return_documents is set, as
// v1 does), chat (v1 and v2) and generate, answering with the test's
// answer.
type fakeCohere struct {
	*httptest.Server
	log       serviceLog
	relevance map[string]float64 // by document text
	answer    string
}

func startFakeCohere(t *testing.T, answer string, relevance map[string]float64) *fakeCohere {
	f := &fakeCohere{relevance: relevance, answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

var cohereMeta = map[string]any{"api_version": map[string]any{"version": "1"}, "billed_units": map[string]any{"search_units": 1}}

func (f *fakeCohere) serve(w http.ResponseWriter, r *http.Request) {
	f.log.note(r)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		writeJSON(w, 401, map[string]string{"message": "no api key supplied"})
		return
	}
	switch r.URL.Path {
	case "/v1/rerank", "/v2/rerank":
		f.rerank(w, r)
	case "/v1/chat":
		writeJSON(w, 200, map[string]any{"response_id": "e2e-response", "text": f.answer, "generation_id": "e2e-generation",
			"chat_history": []any{}, "finish_reason": "COMPLETE", "meta": cohereMeta})
	case "/v2/chat":
		writeJSON(w, 200, map[string]any{"id": "e2e-chat", "finish_reason": "COMPLETE",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": f.answer}}},
			"usage":   map[string]any{"billed_units": map[string]any{"input_tokens": 8, "output_tokens": 7}}})
	case "/v1/generate":
		var req struct {
			Prompt string `json:"prompt"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		writeJSON(w, 200, map[string]any{"id": "e2e-generate", "prompt": req.Prompt,
			"generations": []any{map[string]any{"id": "e2e-generation", "text": f.answer, "finish_reason": "COMPLETE"}},
			"meta":        map[string]any{"api_version": map[string]any{"version": "1"}, "billed_units": map[string]any{"input_tokens": 8, "output_tokens": 7}}})
	default:
		writeJSON(w, 404, map[string]string{"message": "not found: " + r.URL.Path})
	}
}

func (f *fakeCohere) rerank(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query           string            `json:"query"`
		Documents       []json.RawMessage `json:"documents"` // strings, or {"text": ...} objects (v1)
		TopN            int               `json:"top_n"`
		ReturnDocuments bool              `json:"return_documents"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	texts := make([]string, len(req.Documents))
	for i, d := range req.Documents {
		var obj struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(d, &texts[i]) != nil && json.Unmarshal(d, &obj) == nil {
			texts[i] = obj.Text
		}
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch ra, rb := f.relevance[texts[a]], f.relevance[texts[b]]; {
		case ra > rb:
			return -1
		case ra < rb:
			return 1
		}
		return 0
	})
	if req.TopN > 0 {
		order = order[:min(req.TopN, len(order))]
	}
	results := []any{}
	for _, i := range order {
		res := map[string]any{"index": i, "relevance_score": f.relevance[texts[i]]}
		if req.ReturnDocuments && r.URL.Path == "/v1/rerank" {
			res["document"] = map[string]any{"text": texts[i]}
		}
		results = append(results, res)
	}
	writeJSON(w, 200, map[string]any{"id": "e2e-rerank", "results": results, "meta": cohereMeta})
}
