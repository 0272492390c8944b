package judge

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestClassify(t *testing.T) {
	s := newScrubber("sk-secret-key")
	for _, tc := range []struct {
		err    error
		sent   bool
		reason Reason
		status int
	}{
		{&openai.APIError{HTTPStatusCode: 429, Message: "slow down"}, true, ReasonRateLimited, 429},
		{&openai.APIError{HTTPStatusCode: 503, Message: "overloaded"}, true, ReasonServerError, 503},
		{&openai.APIError{HTTPStatusCode: 401, Message: "bad key"}, true, ReasonAuth, 401},
		{&openai.APIError{HTTPStatusCode: 403, Message: "forbidden"}, true, ReasonAuth, 403},
		{&openai.APIError{HTTPStatusCode: 404, Message: "no such model"}, true, ReasonRejected, 404},
		{&openai.APIError{HTTPStatusCode: 408, Message: "timeout"}, true, ReasonTimeout, 408},
		{&openai.RequestError{HTTPStatusCode: 502, Body: []byte("<html>502 Bad Gateway</html>")}, true, ReasonServerError, 502},
		{&openai.RequestError{HTTPStatusCode: 200, Body: []byte("not json")}, true, ReasonBadReply, 200},
		{&url.Error{Op: "Post", URL: "http://judge", Err: errors.New("dial tcp: connection refused")}, true, ReasonUnreachable, 0},
		{fmt.Errorf("%w after 10s", errRequestTimeout), true, ReasonTimeout, 0},
		{fmt.Errorf("%w: no choices", errBadReply), true, ReasonBadReply, 0},
		{errors.New("this model is not supported MaxTokens"), false, ReasonInvalidRequest, 0},
	} {
		got := s.classify(tc.err, tc.sent, "")
		if got.Reason != tc.reason || got.Status != tc.status {
			t.Errorf("%v: %s %d, want %s %d", tc.err, got.Reason, got.Status, tc.reason, tc.status)
		}
	}
}

func TestRetryableAndOutage(t *testing.T) {
	for _, tc := range []struct {
		e                 Error
		retryable, outage bool
	}{
		{Error{Reason: ReasonRateLimited, Status: 429}, true, true},
		{Error{Reason: ReasonServerError, Status: 500}, true, true},
		{Error{Reason: ReasonUnreachable}, true, true},
		{Error{Reason: ReasonTimeout}, true, true},
		{Error{Reason: ReasonBadReply}, true, true},
		{Error{Reason: ReasonAuth, Status: 401}, false, true},
		{Error{Reason: ReasonRejected, Status: 404}, false, true},
		{Error{Reason: ReasonRejected, Status: 400}, false, false},
		{Error{Reason: ReasonInvalidRequest}, false, false},
	} {
		if tc.e.retryable() != tc.retryable || tc.e.outage() != tc.outage {
			t.Errorf("%+v: retryable %v outage %v", tc.e, tc.e.retryable(), tc.e.outage())
		}
	}
}

// What providers and gateways say in their error replies is scrubbed of
// secrets and span content before it can reach a log.
func TestScrubberRemovesSecretsAndContent(t *testing.T) {
	const prompt = "Decide whether the CHUNK is relevant.\n<<<BEGIN CHUNK ab12>>>\nThe quarterly merger figures for ACME are confidential\n<<<END CHUNK ab12>>>"
	s := newScrubber("sk-live-abcdef123456", "gateway-token-987")
	for _, tc := range []struct{ in, mustNot, must string }{
		{"Incorrect API key provided: sk-live-abcdef123456.", "abcdef123456", "[REDACTED]"},
		{"Incorrect API key provided: sk-live-************3456.", "3456", "[REDACTED]"},
		{"header X-Gateway-Key: gateway-token-987 rejected", "gateway-token-987", "[REDACTED]"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGci", "[REDACTED]"},
		{"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "<", "502 Bad Gateway"},
		{"could not parse: The quarterly merger figures for ACME are confidential", "merger", "quotes the request"},
		{strings.Repeat("x", 1000), strings.Repeat("x", 200), "…"},
	} {
		got := s.clean(tc.in, prompt)
		if strings.Contains(got, tc.mustNot) || !strings.Contains(got, tc.must) {
			t.Errorf("clean(%.60q) = %q", tc.in, got)
		}
		if len(got) > maxDetailBytes+len("…") {
			t.Errorf("clean(%.60q) is %d bytes", tc.in, len(got))
		}
	}
}

func TestReasonForStatus(t *testing.T) {
	for code, want := range map[int]Reason{
		http.StatusTooManyRequests: ReasonRateLimited, http.StatusUnauthorized: ReasonAuth,
		http.StatusForbidden: ReasonAuth, http.StatusRequestTimeout: ReasonTimeout,
		http.StatusBadGateway: ReasonServerError, http.StatusUnprocessableEntity: ReasonRejected,
	} {
		if got := reasonForStatus(code); got != want {
			t.Errorf("%d: %s, want %s", code, got, want)
		}
	}
}
