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
