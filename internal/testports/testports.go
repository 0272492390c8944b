// Package testports hands out TCP ports for the processes a test starts
// (collectors, Prometheus), which bind them a moment later.
//
// Picking a port by listening on port 0 and closing the listener leaves a
// moment in which any other listen on port 0 (go test runs packages, and
// tests within them, in parallel) can be given the same port, and the child
// then fails to bind it, or a test reaches another test's collector. So the
// ports come from below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), from which every listen on port
// 0 is served, and each is claimed, for the life of the test process, by a
// lock on a file named after it in a directory all test processes share:
// no two processes hand out the same port.
package testports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// lowest is the first port handed out: above the well-known and most
// registered service ports.
const lowest = 20000

// claims is the directory of the claim files, one a port.
var claims = filepath.Join(os.TempDir(), fmt.Sprintf("ragprecision-testports-%d", os.Getuid()))

var (
	mu    sync.Mutex
	tried = map[int]bool{} // every port this process has tried, handed out or not
	held  []*os.File       // the claims, open (and locked) while the process runs
)

// Pick returns a port that every host can bind now and that no other test
// process, nor this one before, has been given.
func Pick(hosts ...string) (int, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(claims, 0o700); err != nil {
		return 0, fmt.Errorf("testports: %w", err)
	}
	end := ephemeralStart()
	for range 500 {
		port := lowest + rand.IntN(end-lowest)
		if tried[port] {
			continue
		}
		tried[port] = true
		claimed, err := claim(port)
		if err != nil {
			return 0, err
		}
		if !claimed {
			continue
		}
		if bindable(port, hosts) {
			return port, nil
		}
		// Something outside the tests holds it.
	}
	return 0, fmt.Errorf("testports: no port in [%d, %d) free on all of %v", lowest, end, hosts)
}

func claimPath(port int) string { return filepath.Join(claims, strconv.Itoa(port)) }

// claim locks the port's claim file and keeps it open: the lock holds until
// this process exits, however it exits, and then frees the port for others.
// A port another process holds is not claimed.
func claim(port int) (bool, error) {
	f, err := os.OpenFile(claimPath(port), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("testports: %w", err)
	}
	locked, err := lock(f)
	if !locked {
		f.Close()
		return false, err
	}
	held = append(held, f)
	return true, nil
}

func bindable(port int, hosts []string) bool {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, h := range hosts {
		l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		ls = append(ls, l)
	}
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range, or
// 32768, Linux's default, where the kernel does not say.
func ephemeralStart() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(raw)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > lowest+1000 {
				return n
			}
		}
	}
	return 32768
}
