package testenv

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePortBelowEphemeralRange checks that FreePort's ports lie below the
// kernel's ephemeral range, where no outgoing connection takes them, and can be
// bound.
func TestFreePortBelowEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo-10000 < 1000 {
		t.Skipf("the ephemeral range starts at %d: no room below it, FreePort falls back to the kernel's pick", lo)
	}
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if p < 10000 || p >= lo {
			t.Fatalf("FreePort = %d, want a port in [10000, %d)", p, lo)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d from FreePort: %v", p, err)
		}
		ln.Close()
	}
	if len(seen) < 40 {
		t.Errorf("50 calls gave %d distinct ports: the pick is not spread over the range", len(seen))
	}
}
