package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ragprecision/ragprecision/judge"
)

// errWrongCount marks a batched reply whose JSON is valid but whose number of
// verdicts differs from the number of chunks.
var errWrongCount = fmt.Errorf("%w: wrong number of verdicts", judge.ErrBadReply)

type wireVerdict struct {
	// Pointers tell a missing field from an empty one, and json refuses to
	// decode a bool or number into *string, so {"verdict": true} fails.
	Verdict *string `json:"verdict"`
	Reason  *string `json:"reason"`
}

type wireVerdicts struct {
	Verdicts *[]wireVerdict `json:"verdicts"`
}

// unwrapReply trims whitespace and one surrounding Markdown code fence, which
// models without a JSON response format add habitually. Nothing else is
// forgiven: prose before or after the object fails.
func unwrapReply(content string) string {
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if body, ok := strings.CutSuffix(rest, "```"); ok {
			body = strings.TrimPrefix(body, "json")
			body = strings.TrimPrefix(body, "JSON")
			s = strings.TrimSpace(body)
		}
	}
	return s
}

// parseVerdict reads a per_chunk reply: {"verdict": "yes"|"no", "reason": "…"}.
// The verdict is compared case-insensitively after trimming whitespace, so
// "Yes" and " no " are accepted; "yes." or "true" are not.
func parseVerdict(content string) (judge.Verdict, error) {
	var w wireVerdict
	if err := json.Unmarshal([]byte(unwrapReply(content)), &w); err != nil {
		return judge.Verdict{}, fmt.Errorf("%w: %v", judge.ErrBadReply, err)
	}
	return w.toVerdict()
}

// parseVerdicts reads a batched reply with exactly k verdicts.
func parseVerdicts(content string, k int) ([]judge.Verdict, error) {
	var w wireVerdicts
	if err := json.Unmarshal([]byte(unwrapReply(content)), &w); err != nil {
		return nil, fmt.Errorf("%w: %v", judge.ErrBadReply, err)
	}
	if w.Verdicts == nil {
		return nil, fmt.Errorf("%w: missing \"verdicts\"", judge.ErrBadReply)
	}
	if len(*w.Verdicts) != k {
		return nil, fmt.Errorf("%w: got %d, want %d", errWrongCount, len(*w.Verdicts), k)
	}
	out := make([]judge.Verdict, k)
	for i, wv := range *w.Verdicts {
		v, err := wv.toVerdict()
		if err != nil {
			return nil, fmt.Errorf("verdict %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func (w wireVerdict) toVerdict() (judge.Verdict, error) {
	if w.Verdict == nil {
		return judge.Verdict{}, fmt.Errorf("%w: missing \"verdict\"", judge.ErrBadReply)
	}
	var v judge.Verdict
	switch strings.ToLower(strings.TrimSpace(*w.Verdict)) {
	case "yes":
		v.Relevant = true
	case "no":
	default:
		// The value is not quoted: a model may echo span content there, and
		// this error reaches the logs.
		return judge.Verdict{}, fmt.Errorf("%w: verdict is neither \"yes\" nor \"no\" (%d characters)", judge.ErrBadReply, len(*w.Verdict))
	}
	if w.Reason != nil {
		v.Reason = judge.TruncateRunes(strings.TrimSpace(*w.Reason), maxReasonRunes)
	}
	return v, nil
}
