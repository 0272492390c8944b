package openai

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

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
