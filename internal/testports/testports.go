// Package testports hands out TCP ports for the processes a test starts
// (collectors, Prometheus), which bind them a moment later.
//
// The ports come from below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), from which every listen on
// port 0 is served: in the moment between handing a port out and the child
// binding it, no other process's listen on port 0 can take it. go test runs
// packages' tests in parallel, and `make test` runs the unit tests beside
// the end-to-end tests, all of them listening on port 0.
package testports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// lowest is the first port handed out: above the well-known and most
// registered service ports.
const lowest = 20000

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Pick returns a port that every host can bind now and that this process
// has not handed out before.
func Pick(hosts ...string) (int, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	handedOut.Lock()
	defer handedOut.Unlock()
	end := ephemeralStart()
	for range 200 {
		port := lowest + rand.IntN(end-lowest)
		if handedOut.ports[port] || !bindable(port, hosts) {
			continue
		}
		handedOut.ports[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no port in [%d, %d) free on all of %v", lowest, end, hosts)
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
