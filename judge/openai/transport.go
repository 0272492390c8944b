package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"
)

// transport sits under go-openai's HTTP client for what go-openai does not
// offer: it reports whether a request was really sent (go-openai refuses
// some requests before sending, and those must not count as judge
// requests), it reports the Retry-After of failed replies (go-openai's
// errors carry no headers), and it sends temperature 0 on the wire.
type transport struct {
	base http.RoundTripper
	// now is the wall clock, against which a Retry-After date is read.
	now func() time.Time
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
	trace, _ := req.Context().Value(attemptTraceKey{}).(*attemptTrace)
	if trace != nil {
		trace.attempted.Store(true)
	}
	resp, err := t.base.RoundTrip(req)
	if trace != nil && resp != nil && resp.StatusCode >= 400 {
		trace.retryAfter.Store(int64(retryAfter(resp.Header, t.now())))
	}
	return resp, err
}

type attemptTraceKey struct{}

// attemptTrace carries what the transport saw of one attempt back to the
// code that made it. Its fields are set from the transport's goroutines.
type attemptTrace struct {
	// attempted: the request reached the transport (go-openai did not
	// refuse it); written: it was written to a connection.
	attempted, written atomic.Bool
	// retryAfter is the failed reply's Retry-After, a time.Duration.
	retryAfter atomic.Int64
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

func withAttemptTrace(ctx context.Context) (context.Context, *attemptTrace) {
	h := &attemptTrace{}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { h.written.Store(true) },
	})
	return context.WithValue(ctx, attemptTraceKey{}, h), h
}
