package distbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The benchmark measures on Linux only (procstat reads /proc), but this
// package and its command must build on the systems developers use, or
// `go build ./...` and `go vet ./...` (make lint) fail there: Linux-only
// process attributes belong in collector_linux.go.
func TestBuildsOffLinux(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, goos := range []string{"darwin", "windows"} {
		cmd := exec.Command(goTool, "vet", ".", "../../cmd/ragprecision-bench")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s go vet: %v\n%s", goos, err, out)
		}
	}
}
