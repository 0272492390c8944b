//go:build !linux

package distbench

import "syscall"

// childAttrs: only Linux can tie the collector's life to the benchmark's.
// (The benchmark reads the collector's CPU time from /proc, so it measures
// on Linux only; elsewhere it must still build, for `go vet ./...`.)
func childAttrs() *syscall.SysProcAttr { return nil }
