package judge_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The engine starts a worker per request slot: every test must leave none
// running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
