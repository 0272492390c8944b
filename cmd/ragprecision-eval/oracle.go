package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"sync"

	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
)

// oracle is a local OpenAI-compatible judge that answers from the labels of
// the retrievals being evaluated: a perfect LLM (error rate 0), or one that
// is wrong on a fixed share of chunks, chosen by a hash so that every run
// and every judge sees the same mistakes. It measures what a cascade saves
// and loses against an LLM judge without paying for one.
type oracle struct {
	errorRate float64
	mu        sync.RWMutex
	labels    map[[2]string]bool // (question, chunk as sent) → relevant
	srv       *chattest.Server
}

func newOracle(errorRate float64) (*oracle, error) {
	if !(errorRate >= 0 && errorRate <= 1) {
		return nil, fmt.Errorf("-oracle: the error rate must be within [0, 1], got %v", errorRate)
	}
	o := &oracle{errorRate: errorRate, labels: map[[2]string]bool{}}
	o.srv = chattest.NewServer(o.answer)
	return o, nil
}

func (o *oracle) close() { o.srv.Close() }

// url is the base_url to give the judge.
func (o *oracle) url() string { return o.srv.URL }

// source registers the labels of every retrieval src yields before it is
// judged.
func (o *oracle) source(src evalset.Source, titles bool) evalset.Source {
	return oracleSource{o: o, src: src, titles: titles}
}

type oracleSource struct {
	o      *oracle
	src    evalset.Source
	titles bool
}

func (s oracleSource) Next() (evalset.Retrieval, error) {
	r, err := s.src.Next()
	if err != nil {
		return r, err
	}
	texts := r.Texts(s.titles)
	s.o.mu.Lock()
	for i, c := range r.Chunks {
		// As the judge sends it: cut to max_chunk_chars.
		s.o.labels[[2]string{judge.TruncateRunes(r.Query, maxChunkChars), judge.TruncateRunes(texts[i], maxChunkChars)}] = c.Relevant
	}
	s.o.mu.Unlock()
	return r, nil
}

// answer replies to a per-chunk request from the labels.
func (o *oracle) answer(_ int, r chattest.Request) chattest.Reply {
	if r.Batched() {
		return chattest.Reply{Status: 400, Body: `{"error":{"message":"the oracle answers per_chunk requests only"}}`}
	}
	q, chunk := r.Block("QUESTION"), r.Block("CHUNK")
	o.mu.RLock()
	relevant, ok := o.labels[[2]string{q, chunk}]
	o.mu.RUnlock()
	if !ok {
		return chattest.Reply{Status: 404, Body: `{"error":{"message":"the oracle has no label for this chunk"}}`}
	}
	if o.wrong(q, chunk) {
		relevant = !relevant
	}
	v := "no"
	if relevant {
		v = "yes"
	}
	return chattest.Reply{Content: `{"verdict":"` + v + `","reason":"from the labels"}`, PromptTokens: 300, CompletionTokens: 12}
}

// wrong reports whether the oracle errs on this chunk.
func (o *oracle) wrong(q, chunk string) bool {
	if o.errorRate == 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(q))
	h.Write([]byte{0})
	h.Write([]byte(chunk))
	return float64(h.Sum64())/math.MaxUint64 < o.errorRate
}
