// Package chattest is a local OpenAI-compatible Chat Completions server for
// tests and demos: it decodes what a client sends, lets a handler choose the
// reply, and records every request, so that tests exercise the real
// go-openai client over real HTTP.
package chattest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is a Chat Completions request as received on the wire.
type Request struct {
	Model          string          `json:"model"`
	Temperature    *float64        `json:"temperature"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Messages       []Message       `json:"messages"`

	// Raw holds every top-level field as sent.
	Raw    map[string]json.RawMessage `json:"-"`
	Path   string                     `json:"-"`
	Query  string                     `json:"-"`
	Header http.Header                `json:"-"`
}

// System is the first message's content.
func (r Request) System() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[0].Content
}

// User is the last message's content.
func (r Request) User() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// Block returns the content of the user message's fenced data block called
// name ("QUESTION", "REFERENCE", "CHUNK", "CHUNK 2" …), or "" if absent.
func (r Request) Block(name string) string {
	u := r.User()
	open := "<<<BEGIN " + name + " "
	begin := strings.Index(u, open)
	if begin < 0 {
		return ""
	}
	tagStart := begin + len(open)
	tagEnd := strings.Index(u[tagStart:], ">>>")
	if tagEnd < 0 {
		return ""
	}
	tag := u[tagStart : tagStart+tagEnd]
	start := tagStart + tagEnd + len(">>>\n")
	end := strings.Index(u[start:], "\n<<<END "+name+" "+tag+">>>")
	if end < 0 {
		return ""
	}
	return u[start : start+end]
}

// Chunks returns the chunks of a batched request, in order.
func (r Request) Chunks() []string {
	var out []string
	for i := 1; ; i++ {
		if !strings.Contains(r.User(), fmt.Sprintf("<<<BEGIN CHUNK %d ", i)) {
			return out
		}
		out = append(out, r.Block(fmt.Sprintf("CHUNK %d", i)))
	}
}

// Batched reports whether the request asks for all chunks of a span.
func (r Request) Batched() bool {
	return strings.Contains(r.User(), "<<<BEGIN CHUNK 1 ")
}

// Reply is what the server answers.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is added to the response.
	Header map[string]string
	// Content is the assistant message of a 200 reply.
	Content string
	// Body replaces the whole response body when set.
	Body string
	// PromptTokens and CompletionTokens are reported as usage.
	PromptTokens, CompletionTokens int
	// Delay holds the reply back (until the client gives up).
	Delay time.Duration
}

// Handler chooses the reply to the n-th request (from 1).
type Handler func(n int, req Request) Reply

// Server is a running fake endpoint; its URL is the base_url to configure.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	calls    atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
}

// NewServer starts a server on a loopback port. Close it when done.
func NewServer(handle Handler) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, handle)
	}))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, handle Handler) {
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxSeen.Load(); cur > m && !s.maxSeen.CompareAndSwap(m, cur); m = s.maxSeen.Load() {
	}
	body, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}
	_ = json.Unmarshal(body, &req.Raw)
	req.Path, req.Query, req.Header = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	rep := handle(int(s.calls.Add(1)), req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		if rep.Body == "" {
			rep.Body = fmt.Sprintf(`{"error":{"message":"status %d","type":"test"}}`, rep.Status)
		}
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	if rep.Body != "" {
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	out, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.Content}}},
		"usage": map[string]int{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
			"total_tokens": rep.PromptTokens + rep.CompletionTokens},
	})
	_, _ = w.Write(out)
}

// Calls is the number of requests received.
func (s *Server) Calls() int64 { return s.calls.Load() }

// MaxInFlight is the most requests that were being served at once.
func (s *Server) MaxInFlight() int64 { return s.maxSeen.Load() }

// InFlight is the number of requests being answered now.
func (s *Server) InFlight() int64 { return s.inFlight.Load() }

// Requests returns a copy of the requests received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// KeywordJudge answers like a judge that calls a chunk relevant when it
// contains word, in per_chunk and batched mode alike, reporting 100 prompt
// and 10 completion tokens per chunk.
func KeywordJudge(word string) Handler {
	verdict := func(chunk string) string {
		if strings.Contains(chunk, word) {
			return "yes"
		}
		return "no"
	}
	return func(_ int, r Request) Reply {
		if r.Batched() {
			chunks := r.Chunks()
			items := make([]string, len(chunks))
			for i, c := range chunks {
				items[i] = fmt.Sprintf(`{"verdict":%q,"reason":"keyword check %d"}`, verdict(c), i+1)
			}
			return Reply{Content: `{"verdicts":[` + strings.Join(items, ",") + `]}`,
				PromptTokens: 100 * len(chunks), CompletionTokens: 10 * len(chunks)}
		}
		return Reply{Content: fmt.Sprintf(`{"verdict":%q,"reason":"keyword check"}`, verdict(r.Block("CHUNK"))),
			PromptTokens: 100, CompletionTokens: 10}
	}
}

// NewTLSServer is NewServer over https, with a certificate of its own; the
// CA to trust is s.Certificate().
func NewTLSServer(handle Handler) *Server {
	s := &Server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, handle)
	}))
	return s
}
