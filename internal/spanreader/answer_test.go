package spanreader

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A trace's answer is the root span's when it has one, else the
// last-ending LLM span's, whatever order they are observed in; only the
// root's first arrival ends the wait.
func TestJoinedAnswer(t *testing.T) {
	var a JoinedAnswer
	if a.Observe("", false, 5) || a.Best() != "" {
		t.Fatal("an empty LLM answer counts")
	}
	a.Observe("late", false, 20)
	a.Observe("early", false, 10)
	if a.Best() != "late" {
		t.Fatalf("Best %q, want the last-ending LLM span's", a.Best())
	}
	if !a.Observe("", true, 30) {
		t.Fatal("the root's arrival does not end the wait")
	}
	if a.Best() != "late" {
		t.Fatalf("a root without an answer: %q, want the LLM span's", a.Best())
	}
	if a.Observe("second root", true, 40) {
		t.Fatal("a second root span ends the wait again")
	}
	var b JoinedAnswer
	b.Observe("from the root", true, 1)
	b.Observe("from an LLM", false, pcommon.Timestamp(2))
	if b.Best() != "from the root" || b.Bytes() != int64(len("from the root")+len("from an LLM")) {
		t.Fatalf("Best %q, Bytes %d", b.Best(), b.Bytes())
	}
}
