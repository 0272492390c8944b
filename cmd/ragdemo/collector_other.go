//go:build !linux

package main

import "syscall"

// childAttrs: only Linux can tie the collector's life to the demo's.
func childAttrs() *syscall.SysProcAttr { return nil }
