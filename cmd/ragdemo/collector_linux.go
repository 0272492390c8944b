package main

import "syscall"

// childAttrs makes the kernel send the collector SIGTERM when the demo dies
// without stopping it (killed, or writing to a closed pipe as in
// `make demo | head`), so that no orphaned collector keeps the demo's ports
// and answers the next demo's health checks.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
