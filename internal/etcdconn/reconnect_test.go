package etcdconn

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/bound"
)

// TestConnectParams reads back the reconnection settings Open's clients get: a
// store that comes back is tried again within half a second, an attempt that hangs
// is given up within a second, and a client does not knock more than 20 times a
// second on a store that refuses.
func TestConnectParams(t *testing.T) {
	p := connectParams()
	b := p.Backoff
	if longest := time.Duration(float64(b.MaxDelay) * (1 + b.Jitter)); longest >= 500*time.Millisecond {
		t.Errorf("longest pause between attempts %v; want under 500ms", longest)
	}
	if shortest := time.Duration(float64(b.BaseDelay) * (1 - b.Jitter)); shortest < 50*time.Millisecond {
		t.Errorf("shortest pause between attempts %v; want 50ms or more", shortest)
	}
	if b.Multiplier < 1 || b.BaseDelay > b.MaxDelay {
		t.Errorf("pauses from %v growing by %v up to %v", b.BaseDelay, b.Multiplier, b.MaxDelay)
	}
	if p.MinConnectTimeout <= 0 || p.MinConnectTimeout > time.Second {
		t.Errorf("an attempt may take %v; want at most 1s", p.MinConnectTimeout)
	}
}

// TestDialer: the dialer reaches the address forms etcd's client gives it
// (host:port, unix:///absolute, unix:relative) and tracks each connection.
func TestDialer(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	listen := func(network, addr string) string {
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		return ln.Addr().String()
	}
	var conns bound.Conns
	dial := dialer(&conns)
	for i, addr := range []string{
		listen("tcp", "127.0.0.1:0"),
		"unix://" + listen("unix", filepath.Join(dir, "abs.sock")),
		"unix:" + filepath.Base(listen("unix", "rel.sock")),
	} {
		c, err := dial(context.Background(), addr)
		if err != nil {
			t.Fatalf("dial %q: %v", addr, err)
		}
		defer c.Close()
		if conns.Len() != i+1 {
			t.Errorf("after dialing %q, %d connections tracked; want %d", addr, conns.Len(), i+1)
		}
	}
}
