package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for a
// throwaway server a test starts itself, below the kernel's ephemeral range
// (ip_local_port_range): a port the kernel hands out for "127.0.0.1:0" may become
// the source port of another process's next outgoing connection before the
// test's server binds it ("address already in use" while other packages' tests
// run beside it); a port below the range is never given out that way. When no
// such port is free (or the range starts too low to leave room), it falls back to
// one the kernel picks.
func FreePort(t testing.TB) int {
	t.Helper()
	const base = 10000
	lo := ephemeralLow()
	for range 200 {
		if lo-base < 1000 {
			break
		}
		p := base + rand.IntN(lo-base)
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			ln.Close()
			return p
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the low end of the kernel's ephemeral port range, or Linux's
// default (32768) where the kernel does not say.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if v, err := strconv.Atoi(f[0]); err == nil {
			return v
		}
	}
	return 32768
}
