//go:build unix

package testports

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// claim locks the port's claim file (flock), and keeps it open: the lock
// holds until this process exits, however it exits, and then frees the port
// for others. A port locked by another process, or by this one, is not
// claimed.
func claim(port int) (bool, error) {
	f, err := os.OpenFile(claimPath(port), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("testports: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("testports: lock %s: %w", f.Name(), err)
	}
	held = append(held, f)
	return true, nil
}
