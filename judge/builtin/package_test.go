package builtin_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run the judge on the engine, which starts workers: every test
// must leave none running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
