package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/ragprecision/ragprecision/judge"
)

func TestClassify(t *testing.T) {
	s := newScrubber("sk-secret-key")
	for _, tc := range []struct {
		err    error
		sent   bool
		reason judge.Reason
		status int
	}{
		{&goopenai.APIError{HTTPStatusCode: 429, Message: "slow down"}, true, judge.ReasonRateLimited, 429},
		{&goopenai.APIError{HTTPStatusCode: 503, Message: "overloaded"}, true, judge.ReasonServerError, 503},
		{&goopenai.APIError{HTTPStatusCode: 401, Message: "bad key"}, true, judge.ReasonAuth, 401},
		{&goopenai.APIError{HTTPStatusCode: 403, Message: "forbidden"}, true, judge.ReasonAuth, 403},
		{&goopenai.APIError{HTTPStatusCode: 404, Message: "no such model"}, true, judge.ReasonRejected, 404},
		{&goopenai.APIError{HTTPStatusCode: 408, Message: "timeout"}, true, judge.ReasonTimeout, 408},
		{&goopenai.RequestError{HTTPStatusCode: 502, Body: []byte("<html>502 Bad Gateway</html>")}, true, judge.ReasonServerError, 502},
		{&goopenai.RequestError{HTTPStatusCode: 200, Body: []byte("not json")}, true, judge.ReasonBadReply, 200},
		{&url.Error{Op: "Post", URL: "http://judge", Err: errors.New("dial tcp: connection refused")}, true, judge.ReasonUnreachable, 0},
		{fmt.Errorf("%w after 10s", errRequestTimeout), true, judge.ReasonTimeout, 0},
		{fmt.Errorf("%w: no choices", judge.ErrBadReply), true, judge.ReasonBadReply, 0},
		{errors.New("this model is not supported MaxTokens"), false, judge.ReasonInvalidRequest, 0},
	} {
		got := s.classify(tc.err, tc.sent, "")
		if got.Reason != tc.reason || got.Status != tc.status {
			t.Errorf("%v: %s %d, want %s %d", tc.err, got.Reason, got.Status, tc.reason, tc.status)
		}
	}
}

func TestReasonForStatus(t *testing.T) {
	for code, want := range map[int]judge.Reason{
		http.StatusTooManyRequests: judge.ReasonRateLimited, http.StatusUnauthorized: judge.ReasonAuth,
		http.StatusForbidden: judge.ReasonAuth, http.StatusRequestTimeout: judge.ReasonTimeout,
		http.StatusBadGateway: judge.ReasonServerError, http.StatusUnprocessableEntity: judge.ReasonRejected,
	} {
		if got := reasonForStatus(code); got != want {
			t.Errorf("%d: %s, want %s", code, got, want)
		}
	}
}
