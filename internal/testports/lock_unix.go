//go:build unix

package testports

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes f's flock without waiting: false if another process holds it.
func lock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	default:
		return false, fmt.Errorf("testports: lock %s: %w", f.Name(), err)
	}
}
