// Command ragreplay sends recorded traffic back through a collector: the
// OTLP JSON lines the collector's file exporter wrote, at a chosen rate,
// over OTLP/gRPC or OTLP/HTTP, with what the ragprecision processor wrote on
// the spans taken off, so that a collector running examples/replay.yaml
// judges them again with a candidate judge (a span that carries a status
// would pass it untouched):
//
//	ragreplay [-endpoint ADDR] [-protocol grpc|http] [-rate SPANS/S] [-batch N]
//	    [-header K=V]... [-tls] [-keep-annotations] FILE...
//
// Spans keep their trace and span IDs, so that the rescored file compares
// with the recording span by span (ragprecision-eval -traces REPLAYED
// -against RECORDED). Files are globs as well as names (the rotated files
// of one recording: recorded*.json), read in order, one line in memory at
// a time. A batch the collector refuses for now (gRPC Unavailable,
// ResourceExhausted or Aborted; HTTP 429, 502, 503 or 504, as the
// memory_limiter refuses) is sent again with backoff for up to -give-up;
// any other refusal stops the replay. Lines that are not OTLP JSON traces
// are skipped and counted. docs/OPERATING.md, "Replaying recorded traffic".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/recording"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, realClock{})
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragreplay:", err)
		os.Exit(1)
	}
}

// Protocols -protocol accepts.
const (
	protocolGRPC = "grpc"
	protocolHTTP = "http"
)

type options struct {
	endpoint, protocol string
	rate               float64
	batch              int
	headers            headerList
	tls                bool
	keepAnnotations    bool
	timeout, giveUp    time.Duration
	progressEvery      time.Duration
	files              []string
}

// headerList is -header, which may be repeated.
type headerList map[string]string

func (h headerList) String() string {
	var parts []string
	for k := range h {
		parts = append(parts, k+"=…")
	}
	return strings.Join(parts, ",")
}

func (h headerList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	h[strings.TrimSpace(k)] = v
	return nil
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{headers: headerList{}}
	fs := flag.NewFlagSet("ragreplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ragreplay [flags] FILE...\n\nSends recorded OTLP JSON lines (the collector's file exporter's) to an OTLP receiver, without the ragprecision processor's annotations.\n\nFlags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.endpoint, "endpoint", "", "the OTLP receiver: host:port for grpc (default 127.0.0.1:4317), a URL for http (default http://127.0.0.1:4318; /v1/traces is added)")
	fs.StringVar(&o.protocol, "protocol", protocolGRPC, "grpc or http (OTLP/HTTP, protobuf)")
	fs.Float64Var(&o.rate, "rate", 0, "spans per second, on average (0: as fast as the receiver accepts them); keep it within what the candidate judge can score")
	fs.IntVar(&o.batch, "batch", 512, "most spans per export request; a longer line is sent in several")
	fs.Var(o.headers, "header", "KEY=VALUE sent with every request (gRPC metadata or an HTTP header); may be repeated")
	fs.BoolVar(&o.tls, "tls", false, "connect with TLS, verified against the system's CAs (for http, an https:// endpoint does the same)")
	fs.BoolVar(&o.keepAnnotations, "keep-annotations", false, "send the spans as recorded, with what the ragprecision processor wrote on them (a processor passes such spans untouched)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "per export request")
	fs.DurationVar(&o.giveUp, "give-up", 2*time.Minute, "stop when the receiver has refused a batch for this long")
	fs.DurationVar(&o.progressEvery, "progress", 2*time.Second, "report progress on stderr this often (0: only at the end)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.files = fs.Args()
	switch {
	case len(o.files) == 0:
		fs.Usage()
		return o, errors.New("name the recording to replay")
	case o.protocol != protocolGRPC && o.protocol != protocolHTTP:
		return o, fmt.Errorf("-protocol: want %s or %s, got %q", protocolGRPC, protocolHTTP, o.protocol)
	case !(o.rate >= 0):
		return o, fmt.Errorf("-rate: must be 0 or positive, got %v", o.rate)
	case o.batch < 1:
		return o, fmt.Errorf("-batch: must be at least 1, got %d", o.batch)
	case o.timeout <= 0 || o.giveUp < 0:
		return o, errors.New("-timeout must be positive and -give-up not negative")
	}
	if o.endpoint == "" {
		o.endpoint = "127.0.0.1:4317"
		if o.protocol == protocolHTTP {
			o.endpoint = "http://127.0.0.1:4318"
		}
	}
	return o, nil
}

// clock is time as the replay sees it; tests give it their own.
type clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stats count what the replay did.
type stats struct {
	lines, badLines int
	firstBad        error
	spans, stripped int64
	requests        int64
	retries         int64
	rejected        int64 // spans the receiver accepted the request of but refused
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, clk clock) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	files, err := recording.Files(o.files...)
	if err != nil {
		return err
	}
	s, err := newSender(o)
	if err != nil {
		return err
	}
	defer s.close()

	var st stats
	start := clk.Now()
	lastReport := start
	report := func(final bool) {
		elapsed := clk.Now().Sub(start)
		rate := 0.0
		if elapsed > 0 {
			rate = float64(st.spans) / elapsed.Seconds()
		}
		w, prefix := stderr, "ragreplay: "
		if final {
			w, prefix = stdout, "Replayed "
		}
		fmt.Fprintf(w, "%s%d spans (%d stripped of the processor's annotations) from %d lines in %d requests to %s in %s (%.1f spans/s)",
			prefix, st.spans, st.stripped, st.lines, st.requests, s.target(), elapsed.Round(time.Millisecond), rate)
		if st.retries > 0 {
			fmt.Fprintf(w, "; %d requests refused for now and sent again", st.retries)
		}
		if st.rejected > 0 {
			fmt.Fprintf(w, "; the receiver rejected %d spans", st.rejected)
		}
		if st.badLines > 0 {
			fmt.Fprintf(w, "; %d lines are not OTLP JSON traces and were skipped (first: %v)", st.badLines, st.firstBad)
		}
		fmt.Fprintln(w)
	}

	rd := recording.Open(files...)
	defer rd.Close()
	var le *recording.LineError
	for {
		td, err := rd.Next()
		if err == io.EOF {
			break
		}
		if errors.As(err, &le) {
			st.badLines++
			if st.firstBad == nil {
				st.firstBad = err
			}
			continue
		}
		if err != nil {
			return err
		}
		st.lines++
		if !o.keepAnnotations {
			st.stripped += stripAll(td)
		}
		for _, part := range split(td, o.batch) {
			// Paced on average: a request goes when the spans sent so far
			// are due at -rate.
			if o.rate > 0 {
				due := start.Add(time.Duration(float64(st.spans) / o.rate * float64(time.Second)))
				if wait := due.Sub(clk.Now()); wait > 0 {
					if err := clk.Sleep(ctx, wait); err != nil {
						report(true)
						return fmt.Errorf("interrupted: %w", err)
					}
				}
			}
			if err := deliver(ctx, s, part, o, clk, &st); err != nil {
				report(true)
				return err
			}
			st.spans += int64(part.SpanCount())
			if o.progressEvery > 0 && clk.Now().Sub(lastReport) >= o.progressEvery {
				lastReport = clk.Now()
				report(false)
			}
		}
	}
	report(true)
	if st.rejected > 0 {
		return fmt.Errorf("the receiver rejected %d spans", st.rejected)
	}
	if st.lines == 0 {
		return fmt.Errorf("no OTLP JSON traces in %s", strings.Join(files, ", "))
	}
	return nil
}

// Backoff between attempts at a refused batch.
const (
	firstRetry = 100 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// deliver sends one batch until it is accepted, refused for good, or
// refused for now for longer than -give-up.
func deliver(ctx context.Context, s sender, td ptrace.Traces, o options, clk clock, st *stats) error {
	backoff := firstRetry
	refusedSince := time.Time{}
	for {
		rctx, cancel := context.WithTimeout(ctx, o.timeout)
		rejected, err := s.send(rctx, td)
		cancel()
		st.requests++
		if err == nil {
			st.rejected += rejected
			return nil
		}
		var later *refusedForNow
		if !errors.As(err, &later) || ctx.Err() != nil {
			return err
		}
		if refusedSince.IsZero() {
			refusedSince = clk.Now()
		}
		if clk.Now().Sub(refusedSince) >= o.giveUp {
			return fmt.Errorf("refused for %s, giving up (-give-up): %w", o.giveUp, err)
		}
		st.retries++
		if err := clk.Sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, maxRetry)
	}
}

// stripAll takes the processor's annotations off every span of td, and
// counts the spans that had some.
func stripAll(td ptrace.Traces) int64 {
	var n int64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if recording.Strip(spans.At(k)) {
					n++
				}
			}
		}
	}
	return n
}

// split cuts td into batches of at most max spans, in order, each span
// with its resource and scope; td itself when it is small enough. A line
// without spans gives no batch.
func split(td ptrace.Traces, max int) []ptrace.Traces {
	n := td.SpanCount()
	if n == 0 {
		return nil
	}
	if n <= max {
		return []ptrace.Traces{td}
	}
	var out []ptrace.Traces
	var cur ptrace.Traces
	inCur := max // full: the first span starts a batch
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			var dst ptrace.SpanSlice
			opened := false
			for k := 0; k < ss.Spans().Len(); k++ {
				if inCur == max {
					cur = ptrace.NewTraces()
					out = append(out, cur)
					inCur, opened = 0, false
				}
				if !opened {
					nrs := cur.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(nrs.Resource())
					nrs.SetSchemaUrl(rs.SchemaUrl())
					nss := nrs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(nss.Scope())
					nss.SetSchemaUrl(ss.SchemaUrl())
					dst, opened = nss.Spans(), true
				}
				ss.Spans().At(k).CopyTo(dst.AppendEmpty())
				inCur++
			}
		}
	}
	return out
}
