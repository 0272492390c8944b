package openai

import (
	"errors"
	"net/http"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/ragprecision/ragprecision/judge"
)

// errRequestTimeout is a request that outlived Options.Timeout.
var errRequestTimeout = errors.New("judge request timed out")

// classify turns what one attempt returned into a *judge.Error. sent is
// false when the request never reached the transport. The attempt has
// already told its caller's deadline from its own timeout, which it passes
// here as errRequestTimeout.
func (s scrubber) classify(err error, sent bool, prompt string) *judge.Error {
	if !sent {
		return judge.NewUnsentError(judge.ReasonInvalidRequest, s.clean(err.Error(), prompt))
	}
	if errors.Is(err, judge.ErrBadReply) {
		return judge.BadReply(err)
	}
	if errors.Is(err, errRequestTimeout) {
		return judge.NewError(judge.ReasonTimeout, 0, err.Error()).WithCause(errRequestTimeout)
	}
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		detail := apiErr.Message
		if apiErr.Type != "" {
			detail = apiErr.Type + ": " + detail
		}
		return judge.NewError(reasonForStatus(apiErr.HTTPStatusCode), apiErr.HTTPStatusCode, s.clean(detail, prompt))
	}
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		detail := string(reqErr.Body)
		if detail == "" && reqErr.Err != nil {
			detail = reqErr.Err.Error()
		}
		if reqErr.HTTPStatusCode == 0 {
			return judge.NewError(judge.ReasonUnreachable, 0, s.clean(detail, prompt))
		}
		if reqErr.HTTPStatusCode < 300 {
			// A 2xx body go-openai could not decode.
			return judge.NewError(judge.ReasonBadReply, reqErr.HTTPStatusCode, "the reply is not a Chat Completions response")
		}
		return judge.NewError(reasonForStatus(reqErr.HTTPStatusCode), reqErr.HTTPStatusCode, s.clean(detail, prompt))
	}
	// Transport failures: *url.Error around dial, TLS and reset errors.
	return judge.NewError(judge.ReasonUnreachable, 0, s.clean(err.Error(), prompt))
}

func reasonForStatus(code int) judge.Reason {
	switch {
	case code == http.StatusTooManyRequests:
		return judge.ReasonRateLimited
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return judge.ReasonAuth
	case code == http.StatusRequestTimeout:
		return judge.ReasonTimeout
	case code >= 500:
		return judge.ReasonServerError
	case code >= 400:
		return judge.ReasonRejected
	}
	return judge.ReasonBadReply
}
