//go:build !unix

package testports

import (
	"fmt"
	"os"
)

// claim creates the port's claim file and keeps it open while this process
// runs. Without flock, it keeps this process from handing a port out twice,
// but not another process from handing out the same one.
func claim(port int) (bool, error) {
	f, err := os.OpenFile(claimPath(port), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("testports: %w", err)
	}
	for _, h := range held {
		if h.Name() == f.Name() {
			f.Close()
			return false, nil
		}
	}
	held = append(held, f)
	return true, nil
}
