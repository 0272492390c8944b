package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// sender exports batches to an OTLP receiver.
type sender interface {
	// send exports td and returns how many of its spans the receiver
	// rejected while accepting the request (OTLP partial success). A
	// *refusedForNow error means the receiver may accept it later.
	send(ctx context.Context, td ptrace.Traces) (rejected int64, err error)
	target() string
	close()
}

// refusedForNow is a refusal the receiver asks to be retried.
type refusedForNow struct{ err error }

func (e *refusedForNow) Error() string { return e.err.Error() }

func (e *refusedForNow) Unwrap() error { return e.err }

func newSender(o options) (sender, error) {
	if o.protocol == protocolHTTP {
		return newHTTPSender(o)
	}
	return newGRPCSender(o)
}

type grpcSender struct {
	conn     *grpc.ClientConn
	client   ptraceotlp.GRPCClient
	endpoint string
	md       metadata.MD
}

func newGRPCSender(o options) (*grpcSender, error) {
	if strings.Contains(o.endpoint, "://") {
		return nil, fmt.Errorf("-endpoint: host:port for grpc, got %q", o.endpoint)
	}
	creds := insecure.NewCredentials()
	if o.tls {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(o.endpoint, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("-endpoint %s: %w", o.endpoint, err)
	}
	md := metadata.MD{}
	for k, v := range o.headers {
		md.Append(k, v)
	}
	return &grpcSender{conn: conn, client: ptraceotlp.NewGRPCClient(conn), endpoint: o.endpoint, md: md}, nil
}

func (s *grpcSender) send(ctx context.Context, td ptrace.Traces) (int64, error) {
	if len(s.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, s.md)
	}
	resp, err := s.client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		switch status.Code(err) {
		case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
			return 0, &refusedForNow{fmt.Errorf("export to %s: %w", s.endpoint, err)}
		}
		return 0, fmt.Errorf("export to %s: %w", s.endpoint, err)
	}
	return resp.PartialSuccess().RejectedSpans(), nil
}

func (s *grpcSender) target() string { return "grpc://" + s.endpoint }

func (s *grpcSender) close() { _ = s.conn.Close() }

type httpSender struct {
	url     string
	client  *http.Client
	headers map[string]string
}

func newHTTPSender(o options) (*httpSender, error) {
	u := o.endpoint
	if !strings.Contains(u, "://") {
		scheme := "http://"
		if o.tls {
			scheme = "https://"
		}
		u = scheme + u
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("-endpoint: want an http:// or https:// URL, got %q", o.endpoint)
	}
	u = strings.TrimSuffix(u, "/")
	if !strings.HasSuffix(u, "/v1/traces") {
		u += "/v1/traces"
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	return &httpSender{url: u, client: &http.Client{Transport: t}, headers: o.headers}, nil
}

func (s *httpSender) send(ctx context.Context, td ptrace.Traces) (int64, error) {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		// The receiver is not there (yet): as gRPC's Unavailable.
		return 0, &refusedForNow{fmt.Errorf("export to %s: %w", s.url, err)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch resp.StatusCode {
	case http.StatusOK:
		er := ptraceotlp.NewExportResponse()
		if len(data) > 0 && resp.Header.Get("Content-Type") == "application/x-protobuf" {
			if err := er.UnmarshalProto(data); err != nil {
				return 0, fmt.Errorf("export to %s: the response: %w", s.url, err)
			}
		}
		return er.PartialSuccess().RejectedSpans(), nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return 0, &refusedForNow{fmt.Errorf("export to %s: %s", s.url, resp.Status)}
	}
	return 0, fmt.Errorf("export to %s: %s: %.200s", s.url, resp.Status, bytes.TrimSpace(data))
}

func (s *httpSender) target() string { return s.url }

func (s *httpSender) close() { s.client.CloseIdleConnections() }
