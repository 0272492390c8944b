// Package notportable builds on Linux only, in two ways a portability check
// must catch: a Linux-only name in a file every system compiles, and a
// function that only the Linux file of a pair defines.
package notportable

import "syscall"

// Stop uses syscall.Kill, which Windows does not have.
func Stop(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// attrs is defined in attrs_linux.go alone.
var _ = attrs
