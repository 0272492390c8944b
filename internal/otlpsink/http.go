package otlpsink

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// maxBody bounds one export request, decompressed.
const maxBody = 64 << 20

// StartHTTP listens on addr and serves OTLP/HTTP traces at POST /v1/traces,
// in protobuf or JSON, gzip-compressed or not, as the collector's otlp_http
// exporter sends them.
//
// Unlike a gRPC client, which dials as soon as it is created and then backs
// off for up to two minutes while nothing listens, an HTTP exporter connects
// only when it has something to send: a sink that starts after the
// collector receives the first export at once.
func StartHTTP(addr string) (*Sink, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Sink{lis: lis, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", s.serveHTTP)
	s.httpServer = &http.Server{Handler: mux}
	go func() { _ = s.httpServer.Serve(lis) }()
	return s, nil
}

func (s *Sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(r.Body)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	default:
		http.Error(w, fmt.Sprintf("unsupported Content-Encoding %q", enc), http.StatusUnsupportedMediaType)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	asJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if asJSON {
		err = req.UnmarshalJSON(raw)
	} else {
		err = req.UnmarshalProto(raw)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := s.Export(r.Context(), req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var out []byte
	if asJSON {
		out, err = resp.MarshalJSON()
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, err = resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(out)
}
