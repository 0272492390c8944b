package judge

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Errors returned at once, before anything is sent.
var (
	// ErrOverBudget: judging would exceed max_requests_per_second.
	ErrOverBudget = errors.New("judge request budget exhausted")
	// ErrNoCapacity: at the judge's current latency, the requests already
	// queued leave no time for this judgement before its deadline.
	ErrNoCapacity = errors.New("judge cannot finish before the deadline at its current latency")
	// ErrDeadline: the judgement's deadline passed before every chunk was
	// decided.
	ErrDeadline = errors.New("judgement deadline passed")
	// ErrClosed: the judge was closed before the judgement finished.
	ErrClosed = errors.New("judge closed")
)

// Reason says why a judge request failed, in words an operator can act on.
// It is recorded on unscored spans and as a metric label, so that an outage
// never reads as a budget or capacity problem.
type Reason string

const (
	// ReasonRateLimited is HTTP 429: the provider is throttling.
	ReasonRateLimited Reason = "rate_limited"
	// ReasonServerError is HTTP 5xx.
	ReasonServerError Reason = "server_error"
	// ReasonUnreachable is a request that got no HTTP reply: DNS, connection
	// refused or reset, TLS failure.
	ReasonUnreachable Reason = "unreachable"
	// ReasonTimeout is a request that outlived judge.timeout.
	ReasonTimeout Reason = "timeout"
	// ReasonBadReply is a reply outside the wire contract (not the JSON
	// verdict, wrong number of verdicts, no choices).
	ReasonBadReply Reason = "bad_reply"
	// ReasonAuth is HTTP 401 or 403: the key or the gateway's credentials.
	ReasonAuth Reason = "auth"
	// ReasonRejected is any other HTTP 4xx: a wrong model or base_url (404),
	// a request the provider refuses (400, 422, content filters).
	ReasonRejected Reason = "rejected"
	// ReasonInvalidRequest is a request the client library refused to send.
	ReasonInvalidRequest Reason = "invalid_request"
)

// Reasons lists every Reason, for metric series created up front.
var Reasons = []Reason{ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout,
	ReasonBadReply, ReasonAuth, ReasonRejected, ReasonInvalidRequest}

// Error is a failed judge request. Its text is safe to log: secrets are
// scrubbed from it, it is cut short, and a provider's reply that echoes the
// request (and with it span content) is not quoted.
type Error struct {
	Reason Reason
	// Status is the HTTP status of the reply, 0 when there was none.
	Status int
	// Detail is what the provider or the transport said, scrubbed.
	Detail string
	// sent is false when the request never left the process.
	sent bool
	// retryAfter is the server's Retry-After, 0 when it sent none.
	retryAfter time.Duration
	// retryNow asks for another attempt at once, uncounted: the request was
	// changed to what the endpoint accepts.
	retryNow bool
	// cause is the sentinel the failure is an instance of, if any
	// (errBadReply, errRequestTimeout), for errors.Is.
	cause error
}

func (e *Error) Unwrap() error { return e.cause }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("judge request failed (")
	b.WriteString(string(e.Reason))
	b.WriteString(")")
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// retryable reports whether another attempt could succeed: 429, 5xx,
// timeouts (408 among them), broken connections and replies outside the
// contract may pass next time; a client error would be refused the same
// way again, and a request the library refuses to send would be refused
// again.
func (e *Error) retryable() bool {
	switch e.Reason {
	case ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout, ReasonBadReply:
		return true
	}
	return false
}

// outage reports whether the failure says the judge is unavailable, rather
// than that this one request was refused: consecutive outages open the
// health breaker.
func (e *Error) outage() bool {
	switch e.Reason {
	case ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout, ReasonAuth, ReasonBadReply:
		return true
	case ReasonRejected:
		return e.Status == http.StatusNotFound // a wrong model or base_url fails every request
	}
	return false
}

// ReasonOf is the Reason of a judgement's error, or "" when it is not a
// judge failure (budget, capacity, deadline, shutdown).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// errRequestTimeout is a request that outlived judge.timeout.
var errRequestTimeout = errors.New("judge request timed out")

// maxDetailBytes bounds what an error quotes of a provider's reply.
const maxDetailBytes = 160

// scrubber removes secrets and span content from what providers and
// gateways say in their error replies, before it can reach a log.
type scrubber struct {
	secrets []string
}

func newScrubber(secrets ...string) scrubber {
	var s scrubber
	for _, v := range secrets {
		// Very short values would blank out ordinary words.
		if len(v) >= 4 {
			s.secrets = append(s.secrets, v)
		}
	}
	return s
}

var (
	htmlTag = regexp.MustCompile(`<[^>]*>`)
	// Key-shaped tokens and credentials after their usual labels, as
	// providers echo them ("Incorrect API key provided: sk-abc***xyz").
	keyShaped   = regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_\-*.]{4,}`)
	schemeToken = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	credentials = regexp.MustCompile(`(?i)(api[-_ ]?key|authorization|x-api-key|token|password|secret)(["'\s:=]+)(?:(?:bearer|basic)\s+)?[^\s"',;}]+`)
)

// clean returns text fit for a log line: secrets replaced, markup and
// white space collapsed, cut to maxDetailBytes; or a note in its place when
// it quotes the request, whose content is span data (prompt is the text
// that was sent).
func (s scrubber) clean(text, prompt string) string {
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, "[REDACTED]")
	}
	text = keyShaped.ReplaceAllString(text, "[REDACTED]")
	text = schemeToken.ReplaceAllString(text, "$1 [REDACTED]")
	text = credentials.ReplaceAllString(text, "$1$2[REDACTED]")
	text = htmlTag.ReplaceAllString(text, " ")
	text = strings.Join(strings.Fields(strings.ToValidUTF8(text, "")), " ")
	if echoes(text, prompt) {
		return "(the reply quotes the request, so it is not logged)"
	}
	if len(text) > maxDetailBytes {
		cut := maxDetailBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// echoWindow is the length of a run of request text that, found in a
// reply, marks the reply as quoting the request.
const echoWindow = 24

// echoes reports whether text contains any run of echoWindow bytes of
// prompt (sampled every few bytes: a quote is longer than that).
func echoes(text, prompt string) bool {
	if prompt == "" || len(text) < echoWindow {
		return false
	}
	fields := strings.Join(strings.Fields(prompt), " ")
	for i := 0; i+echoWindow <= len(text); i += echoWindow / 3 {
		w := text[i : i+echoWindow]
		if strings.Contains(prompt, w) || strings.Contains(fields, w) {
			return true
		}
	}
	return false
}

// classify turns what one attempt returned into an *Error. sent is false
// when the request never reached the transport. The attempt has already
// told its caller's deadline from judge.timeout, which it passes here as
// errRequestTimeout.
func (s scrubber) classify(err error, sent bool, prompt string) *Error {
	if !sent {
		return &Error{Reason: ReasonInvalidRequest, Detail: s.clean(err.Error(), prompt)}
	}
	if errors.Is(err, errBadReply) {
		return badReply(err)
	}
	if errors.Is(err, errRequestTimeout) {
		return &Error{Reason: ReasonTimeout, Detail: err.Error(), sent: true, cause: errRequestTimeout}
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		detail := apiErr.Message
		if apiErr.Type != "" {
			detail = apiErr.Type + ": " + detail
		}
		return &Error{Reason: reasonForStatus(apiErr.HTTPStatusCode), Status: apiErr.HTTPStatusCode, Detail: s.clean(detail, prompt), sent: true}
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		detail := string(reqErr.Body)
		if detail == "" && reqErr.Err != nil {
			detail = reqErr.Err.Error()
		}
		if reqErr.HTTPStatusCode == 0 {
			return &Error{Reason: ReasonUnreachable, Detail: s.clean(detail, prompt), sent: true}
		}
		if reqErr.HTTPStatusCode < 300 {
			// A 2xx body go-openai could not decode.
			return &Error{Reason: ReasonBadReply, Status: reqErr.HTTPStatusCode, Detail: "the reply is not a Chat Completions response", sent: true}
		}
		return &Error{Reason: reasonForStatus(reqErr.HTTPStatusCode), Status: reqErr.HTTPStatusCode, Detail: s.clean(detail, prompt), sent: true}
	}
	// Transport failures: *url.Error around dial, TLS and reset errors.
	return &Error{Reason: ReasonUnreachable, Detail: s.clean(err.Error(), prompt), sent: true}
}

// badReply is the failure of a reply outside the wire contract; err wraps
// errBadReply. Its text is quoted as is: our own parser's messages never
// quote the reply.
func badReply(err error) *Error {
	return &Error{Reason: ReasonBadReply, Detail: err.Error(), sent: true, cause: errBadReply}
}

func reasonForStatus(code int) Reason {
	switch {
	case code == http.StatusTooManyRequests:
		return ReasonRateLimited
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return ReasonAuth
	case code == http.StatusRequestTimeout:
		return ReasonTimeout
	case code >= 500:
		return ReasonServerError
	case code >= 400:
		return ReasonRejected
	}
	return ReasonBadReply
}
