package openai_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run the backend on the engine, which starts workers: every test
// must leave none running, nor an idle connection's goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
