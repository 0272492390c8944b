package openai

import (
	"strings"
	"testing"
)

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
