package recording

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
)

func TestResultOf(t *testing.T) {
	s := ptrace.NewSpan()
	if r := ResultOf(s); r.Selected() || r.Scored() || r.Verdicts != nil {
		t.Fatalf("a span the processor never saw: %+v", r)
	}
	a := s.Attributes()
	a.PutStr(ragattr.Status, ragattr.StatusScored)
	a.PutStr(ragattr.ReferenceSource, "answer")
	a.PutStr(ragattr.Judge, "openai:gpt-4o-mini")
	a.PutStr(ragattr.JudgeVersion, "abc123")
	vs := a.PutEmptySlice(ragattr.Verdicts)
	vs.AppendEmpty().SetBool(true)
	vs.AppendEmpty().SetBool(false)
	r := ResultOf(s)
	if !r.Scored() || !reflect.DeepEqual(r.Verdicts, []bool{true, false}) || r.BadVerdicts ||
		r.ReferenceSource != "answer" || r.Judge != "openai:gpt-4o-mini" || r.JudgeVersion != "abc123" {
		t.Fatalf("a scored span: %+v", r)
	}
	vs.AppendEmpty().SetStr("yes")
	if r := ResultOf(s); !r.BadVerdicts || r.Verdicts != nil {
		t.Fatalf("verdicts with a string: %+v", r)
	}
	a.PutStr(ragattr.Verdicts, "[true]")
	if r := ResultOf(s); !r.BadVerdicts || r.Verdicts != nil {
		t.Fatalf("verdicts as a string: %+v", r)
	}
	u := ptrace.NewSpan()
	u.Attributes().PutStr(ragattr.Status, ragattr.StatusJudgeError)
	u.Attributes().PutStr(ragattr.Reason, "rate_limited")
	if r := ResultOf(u); !r.Selected() || r.Scored() || r.Reason != "rate_limited" || r.Verdicts != nil {
		t.Fatalf("an unscored span: %+v", r)
	}
}
