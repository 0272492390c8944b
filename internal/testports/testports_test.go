package testports

import (
	"net"
	"strconv"
	"testing"
)

// Ports come from below the ephemeral range, never twice, and bindable.
func TestPickBelowTheEphemeralRange(t *testing.T) {
	end := ephemeralStart()
	seen := map[int]bool{}
	for range 50 {
		p, err := Pick("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if p < lowest || p >= end {
			t.Fatalf("port %d outside [%d, %d)", p, lowest, end)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		l.Close()
	}
}
