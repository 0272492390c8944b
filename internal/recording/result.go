package recording

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// Result is what the processor recorded on a span it selected (README,
// "Output on spans").
type Result struct {
	// Status is scored, or why the span was not; "" on a span the
	// processor did not select (or never saw).
	Status string
	// Reason is the kind of a judge_error, or the limit of an overflow.
	Reason string
	// Verdicts are the recorded verdicts in rank order; nil when the span
	// has none.
	Verdicts []bool
	// BadVerdicts is set when the verdicts attribute is there but not an
	// array of booleans.
	BadVerdicts     bool
	ReferenceSource string
	Judge           string
	JudgeVersion    string
}

// Selected reports whether the processor selected the span.
func (r Result) Selected() bool { return r.Status != "" }

// Scored reports whether the processor scored the span.
func (r Result) Scored() bool { return r.Status == ragattr.StatusScored }

// ResultOf reads what the processor recorded on span.
func ResultOf(span ptrace.Span) Result {
	attrs := span.Attributes()
	r := Result{
		Status:          str(attrs, ragattr.Status),
		Reason:          str(attrs, ragattr.Reason),
		ReferenceSource: str(attrs, ragattr.ReferenceSource),
		Judge:           str(attrs, ragattr.Judge),
		JudgeVersion:    str(attrs, ragattr.JudgeVersion),
	}
	v, ok := attrs.Get(ragattr.Verdicts)
	if !ok {
		return r
	}
	if v.Type() != pcommon.ValueTypeSlice {
		r.BadVerdicts = true
		return r
	}
	sl := v.Slice()
	r.Verdicts = make([]bool, sl.Len())
	for i := 0; i < sl.Len(); i++ {
		e := sl.At(i)
		if e.Type() != pcommon.ValueTypeBool {
			r.Verdicts, r.BadVerdicts = nil, true
			return r
		}
		r.Verdicts[i] = e.Bool()
	}
	return r
}

// str is a string attribute, "" when missing or of another type.
func str(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
