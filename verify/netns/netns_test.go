package netns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newNet makes a Net with a prefix of its own ("t" and five random hex digits)
// and its lock file in the test's temporary directory, so that it neither waits
// for nor disturbs another run on this machine (a harness run uses "fh"). It
// skips under -short, and when the machine cannot (failing under
// FLURRY_TEST_REQUIRE=1).
func newNet(t *testing.T) *Net {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: makes network namespaces, as root; run: go test ./verify/netns/")
	}
	ctx := context.Background()
	if err := Check(ctx); err != nil {
		if os.Getenv("FLURRY_TEST_REQUIRE") == "1" {
			t.Fatalf("FLURRY_TEST_REQUIRE=1: %v", err)
		}
		t.Skipf("%v", err)
	}
	var b [3]byte
	rand.Read(b[:])
	prefix := "t" + hex.EncodeToString(b[:])[:5]
	n, err := New(ctx, Options{Prefix: prefix, LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if left, _ := List(context.Background(), prefix); len(left) != 0 {
			t.Errorf("namespaces left after Close: %v", left)
		}
	})
	return n
}

// TestBlockDropReject: hosts on the bridge reach each other; a Reject rule refuses at
// once, a Drop rule makes the connection attempt hang, Unblock restores it, and
// nothing of the network is visible in the root namespace.
func TestBlockDropReject(t *testing.T) {
	n := newNet(t)
	ctx := context.Background()
	a, err := n.AddHost(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.AddHost(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Listen("tcp", net.JoinHostPort(b.Addr.String(), "7000"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "hi")
			c.Close()
		}
	}()
	addr := net.JoinHostPort(b.Addr.String(), "7000")
	dial := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		c, err := a.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		buf, err := io.ReadAll(c)
		if string(buf) != "hi" {
			return errors.New("read " + string(buf))
		}
		return err
	}
	if err := dial(5 * time.Second); err != nil {
		t.Fatalf("before any rule: %v", err)
	}
	if err := b.Block(ctx, "rej", Rule{Peer: a.Addr, LocalPort: 7000, Action: Reject}); err != nil {
		t.Fatal(err)
	}
	if err := dial(5 * time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("with a reject rule: %v, want connection refused", err)
	}
	if err := b.Unblock(ctx, "rej"); err != nil {
		t.Fatal(err)
	}
	if err := a.Block(ctx, "rej", Rule{Peer: b.Addr, PeerPort: 7000, Action: Drop}); err != nil {
		t.Fatal(err)
	}
	if err := dial(700 * time.Millisecond); !isTimeout(err) {
		t.Fatalf("with a drop rule: %v, want a timeout", err)
	}
	if err := a.Unblock(ctx, "rej"); err != nil {
		t.Fatal(err)
	}
	if err := dial(5 * time.Second); err != nil {
		t.Fatalf("after Unblock: %v", err)
	}
	if err := a.Block(ctx, "loss", Rule{Action: Lose, Percent: 100}); err != nil {
		t.Fatal(err)
	}
	if err := dial(700 * time.Millisecond); !isTimeout(err) {
		t.Fatalf("with 100%% loss: %v, want a timeout", err)
	}
	if err := a.Block(ctx, "loss", Rule{Action: Lose, Percent: 1}); err != nil {
		t.Fatal(err)
	}
	if err := dial(10 * time.Second); err != nil {
		t.Fatalf("with 1%% loss: %v", err)
	}
	if err := a.Unblock(ctx, "loss"); err != nil {
		t.Fatal(err)
	}
	// A delay of 300 ms on everything a sends: a connection (SYN from a, data
	// from b, ACK from a...) takes at least 300 ms and still works.
	dl, err := a.StartDelay(ctx, 7, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := dial(10 * time.Second); err != nil {
		t.Fatalf("with a delay: %v", err)
	}
	if took := time.Since(t0); took < 300*time.Millisecond {
		t.Errorf("a connection under a 300ms delay took %s", took)
	}
	if err := dl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dial(5 * time.Second); err != nil {
		t.Fatalf("after the delay: %v", err)
	}
	// The root namespace has no interface or address of ours.
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, "va") || i.Name == "br0" {
			t.Errorf("interface %s in the root namespace", i.Name)
		}
		addrs, _ := i.Addrs()
		for _, ad := range addrs {
			if strings.HasPrefix(ad.String(), "10.213.") {
				t.Errorf("address %s on %s in the root namespace", ad, i.Name)
			}
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestDelayTo: a delay to some peers holds what the host sends to them and
// nothing it sends to the others (a long-distance link beside a near one), and
// Stop ends it. The delay is long (2 s) so that a loaded machine cannot pass for
// it: a connect to the delayed peer cannot take less, one to the other peer and
// one after Stop have no reason to take as much.
func TestDelayTo(t *testing.T) {
	n := newNet(t)
	ctx := context.Background()
	var hosts []*Host
	for _, name := range []string{"a", "b", "c"} {
		h, err := n.AddHost(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	a, b, c := hosts[0], hosts[1], hosts[2]
	for _, h := range []*Host{b, c} {
		l, err := h.Listen("tcp", net.JoinHostPort(h.Addr.String(), "7000"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				conn.Close()
			}
		}()
	}
	connect := func(h *Host) time.Duration {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		t0 := time.Now()
		conn, err := a.DialContext(cctx, "tcp", net.JoinHostPort(h.Addr.String(), "7000"))
		if err != nil {
			t.Fatalf("connect to %s: %v", h.Name, err)
		}
		d := time.Since(t0)
		conn.Close()
		return d
	}
	const d = 2 * time.Second
	dl, err := a.StartDelayTo(ctx, 3, d, b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := connect(b); got < d {
		t.Errorf("connect to the delayed peer took %s, want at least %s", got, d)
	}
	if got := connect(c); got >= d {
		t.Errorf("connect to the other peer took %s: it was delayed too", got)
	}
	if err := dl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := connect(b); got >= d {
		t.Errorf("connect after Stop took %s: the delay stayed", got)
	}
}
