package openai

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/judge"
)

func TestParseVerdictsCount(t *testing.T) {
	if _, err := parseVerdicts(`{"verdicts":[{"verdict":"yes"},{"verdict":"no"}]}`, 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		`{"verdicts":[{"verdict":"yes"}]}`,
		`{"verdicts":[{"verdict":"yes"},{"verdict":"no"},{"verdict":"no"}]}`,
		`{"verdicts":[]}`,
	} {
		if _, err := parseVerdicts(c, 2); !errors.Is(err, errWrongCount) {
			t.Errorf("%s: err %v, want wrong count", c, err)
		}
	}
	for _, c := range []string{`{"verdicts":[{"verdict":"yes"},{"verdict":"sure"}]}`, `{}`, `{"verdicts":null}`, `[]`} {
		if _, err := parseVerdicts(c, 2); !errors.Is(err, judge.ErrBadReply) || errors.Is(err, errWrongCount) {
			t.Errorf("%s: err %v, want bad reply", c, err)
		}
	}
}

func TestReasonIsCapped(t *testing.T) {
	v, err := parseVerdict(`{"verdict":"yes","reason":"` + strings.Repeat("é", 1000) + `"}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(v.Reason)); n != maxReasonRunes {
		t.Fatalf("reason has %d runes", n)
	}
}

// Parse errors, which reach the logs, do not quote the model's reply.
func TestParseErrorsDoNotQuoteContent(t *testing.T) {
	_, err := parseVerdict(`{"verdict": "the secret chunk says yes"}`)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err %v", err)
	}
}

// batched parsing is forgiving of case and whitespace, like per_chunk, and
// strict otherwise.
func TestBatchedParsingIsForgivingOfCaseAndSpace(t *testing.T) {
	vs, err := parseVerdicts(` {"verdicts": [{"verdict": "Yes", "reason": "r"}, {"verdict": " no ", "reason": "r"}, {"verdict": "YES"}]} `, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := []bool{vs[0].Relevant, vs[1].Relevant, vs[2].Relevant}; !reflect.DeepEqual(got, []bool{true, false, true}) {
		t.Fatalf("verdicts %v", got)
	}
	for _, bad := range []string{
		`{"verdicts": [{"verdict": "yes."}, {"verdict": "no"}]}`,
		`{"verdicts": [{"verdict": true}, {"verdict": "no"}]}`,
		`{"verdicts": [{"reason": "no verdict"}, {"verdict": "no"}]}`,
		`Here you go: {"verdicts": [{"verdict": "yes"}, {"verdict": "no"}]}`,
	} {
		if _, err := parseVerdicts(bad, 2); !errors.Is(err, judge.ErrBadReply) {
			t.Errorf("%s: err %v, want a failed attempt", bad, err)
		}
	}
}
