package judge

import "testing"

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
