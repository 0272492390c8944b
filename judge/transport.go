package judge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// transport sits under go-openai's HTTP client for two things go-openai does
// not offer: it reports the Retry-After of failed replies (go-openai's errors
// carry no headers), and it sends temperature 0 on the wire.
type transport struct {
	base  http.RoundTripper
	clock Clock
}

// zeroTemperature is how go-openai encodes the smallest float32, which is
// what the judge sets because go-openai drops a temperature of exactly 0
// (omitempty; sashabaranov/go-openai#9). The transport turns it back into 0.
// A chunk cannot forge the pattern: inside JSON strings the quotes around
// "temperature" are escaped, so only the top-level field matches.
var (
	zeroTemperatureSent = []byte(`"temperature":1e-45`)
	zeroTemperatureWire = []byte(`"temperature":0`)
)

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = bytes.Replace(body, zeroTemperatureSent, zeroTemperatureWire, 1)
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.StatusCode >= 400 {
		if h, ok := req.Context().Value(retryHintKey{}).(*retryHint); ok {
			h.set(retryAfter(resp.Header, t.clock.Now()))
		}
	}
	return resp, err
}

type retryHintKey struct{}

// retryHint carries a server's Retry-After from the transport back to the
// retry loop of the request that received it.
type retryHint struct {
	mu    sync.Mutex
	after time.Duration
}

func (h *retryHint) set(d time.Duration) {
	h.mu.Lock()
	h.after = d
	h.mu.Unlock()
}

func (h *retryHint) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.after
}

// retryAfter reads how long the server asked us to wait: retry-after-ms
// (Azure OpenAI, OpenAI) in milliseconds, else Retry-After in seconds or as
// an HTTP date. 0 means no usable hint.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func withRetryHint(ctx context.Context) (context.Context, *retryHint) {
	h := &retryHint{}
	return context.WithValue(ctx, retryHintKey{}, h), h
}
