package config

import (
	"testing"

	"go.uber.org/goleak"
)

// NewJudge starts the engine's workers: every test must leave none running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
