package judge_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The engine owns no transport: a client library or net/http in its
// dependencies would mean a backend's concerns leaked into it.
func TestEngineImportsNoTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" || strings.HasPrefix(dep, "github.com/sashabaranov/go-openai") {
			t.Errorf("package judge depends on %s", dep)
		}
	}
}
