package otlpsink

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func traces(names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, n := range names {
		ss.AppendEmpty().SetName(n)
	}
	return td
}

func post(t *testing.T, url, contentType, encoding string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestHTTPSink(t *testing.T) {
	s, err := StartHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	url := "http://" + s.Addr() + "/v1/traces"

	proto, err := ptraceotlp.NewExportRequestFromTraces(traces("a", "b")).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(proto)
	_ = zw.Close()
	if resp := post(t, url, "application/x-protobuf", "gzip", zipped.Bytes()); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("gzip protobuf: %s", resp.Status)
	}
	js, err := ptraceotlp.NewExportRequestFromTraces(traces("c")).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, url, "application/json", "", js); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("json: %s", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := s.WaitForSpans(ctx, 3); err != nil || n != 3 {
		t.Fatalf("WaitForSpans: %d, %v", n, err)
	}
	got := s.Traces()
	if len(got) != 2 || got[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Name() != "b" {
		t.Errorf("traces %d", len(got))
	}

	for _, c := range []struct {
		contentType, encoding string
		body                  []byte
		want                  int
	}{
		{"application/x-protobuf", "br", proto, http.StatusUnsupportedMediaType},
		{"application/x-protobuf", "gzip", proto, http.StatusBadRequest}, // not gzip
		{"application/json", "", []byte("{not json"), http.StatusBadRequest},
	} {
		if resp := post(t, url, c.contentType, c.encoding, c.body); resp.StatusCode != c.want {
			t.Errorf("%s %s: %s, want %d", c.contentType, c.encoding, resp.Status, c.want)
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %s", resp.Status)
	}
	if s.SpanCount() != 3 {
		t.Errorf("%d spans after bad requests, want 3", s.SpanCount())
	}
}
