package distbench

import "syscall"

// childAttrs makes the kernel stop the collector if the benchmark dies
// without doing so.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
