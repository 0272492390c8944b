package judge

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors returned at once, before anything is sent.
var (
	// ErrOverBudget: judging would exceed the request budget.
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

// ErrBadReply marks a reply that does not follow the wire contract. It is a
// failed attempt, retried like a 5xx, and never turned into a verdict.
var ErrBadReply = errors.New("judge reply does not follow the contract")

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
	// ReasonTimeout is a request that outlived the backend's own timeout.
	ReasonTimeout Reason = "timeout"
	// ReasonBadReply is a reply outside the wire contract (not the JSON
	// verdict, wrong number of verdicts, no choices).
	ReasonBadReply Reason = "bad_reply"
	// ReasonAuth is HTTP 401 or 403: the key or the gateway's credentials.
	ReasonAuth Reason = "auth"
	// ReasonRejected is any other HTTP 4xx: a wrong model or endpoint (404),
	// a request the provider refuses (400, 422, content filters).
	ReasonRejected Reason = "rejected"
	// ReasonInvalidRequest is a request the client library refused to send.
	ReasonInvalidRequest Reason = "invalid_request"
)

// Reasons lists every Reason, for metric series created up front.
var Reasons = []Reason{ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout,
	ReasonBadReply, ReasonAuth, ReasonRejected, ReasonInvalidRequest}

// Error is a failed judge request. Its text is safe to log: backends scrub
// secrets from it, cut it short, and never quote a reply that echoes the
// request (and with it span content). Backends make one with NewError or
// NewUnsentError and say what the engine should do next with the With…
// and RetryNow methods.
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
	// retryNow asks for another attempt at once, uncounted.
	retryNow bool
	// cause is the sentinel the failure is an instance of, if any, for
	// errors.Is.
	cause error
}

// NewError is a failed attempt that reached the judge: the engine counts it
// as a request and retries it when its reason may pass next time.
func NewError(reason Reason, status int, detail string) *Error {
	return &Error{Reason: reason, Status: status, Detail: detail, sent: true}
}

// NewUnsentError is an attempt refused before its request left the process:
// no judge request happened, and the same request would be refused again,
// so it is neither counted nor retried.
func NewUnsentError(reason Reason, detail string) *Error {
	return &Error{Reason: reason, Detail: detail}
}

// BadReply is the failure of a reply outside the wire contract, described
// by err, which must not quote the reply: this text reaches the logs.
func BadReply(err error) *Error {
	return NewError(ReasonBadReply, 0, err.Error()).WithCause(ErrBadReply)
}

// WithRetryAfter records the server's Retry-After (0: none), which replaces
// the engine's backoff before the next attempt. It returns e.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	e.retryAfter = d
	return e
}

// WithCause makes errors.Is(e, cause) hold, for a sentinel the failure is an
// instance of. It returns e.
func (e *Error) WithCause(cause error) *Error {
	e.cause = cause
	return e
}

// RetryNow asks for another attempt at once, not counted against the
// retries: the backend has changed its request to what the endpoint
// accepts. It returns e.
func (e *Error) RetryNow() *Error {
	e.retryNow = true
	return e
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
// contract may pass next time; a client error, or a request the library
// refuses to send, would be refused the same way again.
func (e *Error) retryable() bool {
	switch e.Reason {
	case ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout, ReasonBadReply:
		return true
	}
	return false
}

// statusNotFound is HTTP 404, written out so that this package needs no
// net/http.
const statusNotFound = 404

// outage reports whether the failure says the judge is unavailable, rather
// than that this one request was refused: consecutive outages open the
// health breaker.
func (e *Error) outage() bool {
	switch e.Reason {
	case ReasonRateLimited, ReasonServerError, ReasonUnreachable, ReasonTimeout, ReasonAuth, ReasonBadReply:
		return true
	case ReasonRejected:
		return e.Status == statusNotFound // a wrong model or endpoint fails every request
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

// Cancelled is what an attempt returns when its context (the deadline of
// every judgement waiting for it, or Close) ended it: not the judge's
// failure. sent reports whether the request was written to the judge,
// which makes it a request the observer counts.
func Cancelled(err error, sent bool) error { return &callerError{err: err, sent: sent} }

// callerError is an attempt ended by the caller's context.
type callerError struct {
	err  error
	sent bool
}

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }
