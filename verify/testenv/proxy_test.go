package testenv

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// echoServer answers every line with the same line until the test ends.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends a line and reads it back, waiting at most wait.
func roundTrip(c net.Conn, line string, wait time.Duration) error {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return errors.New("echoed " + got)
	}
	return nil
}

// TestProxyHang: a hanging proxy forwards nothing on open or new connections, and
// forwards again after Restore; Cut still refuses.
func TestProxyHang(t *testing.T) {
	p := StartProxy(t, echoServer(t))
	old := dial(t, p.Addr())
	if err := roundTrip(old, "before", 10*time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	p.Hang()
	// Nothing comes back within the wait: the call hangs (it does not fail fast
	// either, as it would behind Cut).
	if err := roundTrip(old, "held", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("open connection while hanging: %v, want a timeout", err)
	}
	fresh := dial(t, p.Addr()) // accepted: the dial itself succeeds
	if err := roundTrip(fresh, "new", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection while hanging: %v, want a timeout", err)
	}

	p.Restore()
	// What was held is forwarded now: the old connection's "held" arrives first.
	old.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(old)
	if got, err := r.ReadString('\n'); err != nil || got != "held\n" {
		t.Fatalf("held line after Restore: %q, %v", got, err)
	}
	if err := roundTrip(old, "after", 10*time.Second); err != nil {
		t.Fatalf("open connection after Restore: %v", err)
	}
	fresh.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := bufio.NewReader(fresh).ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("held line of the connection made while hanging: %q, %v", got, err)
	}
	if err := roundTrip(dial(t, p.Addr()), "again", 10*time.Second); err != nil {
		t.Fatalf("new connection after Restore: %v", err)
	}

	// Hang, then Cut: held connections are closed, new ones refused.
	p.Hang()
	held := dial(t, p.Addr())
	p.Cut()
	if err := roundTrip(held, "x", 10*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("held connection after Cut: %v, want it closed", err)
	}
	if err := roundTrip(dial(t, p.Addr()), "x", 10*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection after Cut: %v, want it closed", err)
	}
	p.Restore()
	if err := roundTrip(dial(t, p.Addr()), "back", 10*time.Second); err != nil {
		t.Fatalf("after Cut and Restore: %v", err)
	}
}

// nameServer greets every connection with its name.
func nameServer(t *testing.T, name string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			io.WriteString(c, name+"\n")
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestProxyRetarget: connections made after Retarget reach the new target.
func TestProxyRetarget(t *testing.T) {
	p := StartProxy(t, nameServer(t, "a"))
	greeting := func() string {
		c := dial(t, p.Addr())
		c.SetDeadline(time.Now().Add(10 * time.Second))
		s, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if g := greeting(); g != "a\n" {
		t.Fatalf("before Retarget: %q, want a", g)
	}
	p.Retarget(nameServer(t, "b"))
	if g := greeting(); g != "b\n" {
		t.Fatalf("after Retarget: %q, want b", g)
	}
}

// TestProxyRefuse: a refusing proxy turns dials away (ECONNREFUSED) and resets open
// connections; Restore listens on the same port again. Accepted counts the
// connections it took, not those the kernel refused.
func TestProxyRefuse(t *testing.T) {
	p := StartProxy(t, echoServer(t))
	old := dial(t, p.Addr())
	if err := roundTrip(old, "before", 10*time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Refuse()
	if err := roundTrip(old, "x", 10*time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("open connection after Refuse: %v, want ECONNRESET", err)
	}
	if c, err := net.Dial("tcp", p.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial after Refuse: %v, want ECONNREFUSED", err)
	}
	p.Restore()
	if err := roundTrip(dial(t, p.Addr()), "back", 10*time.Second); err != nil {
		t.Fatalf("after Refuse and Restore: %v", err)
	}
	if n := p.Accepted(); n != 2 {
		t.Errorf("Accepted() = %d, want 2 (the refused dial is not one)", n)
	}
}

// TestProxyDrop: after Drop and Restore, the connections open during the drop stay
// silent and new ones are forwarded.
func TestProxyDrop(t *testing.T) {
	p := StartProxy(t, echoServer(t))
	old := dial(t, p.Addr())
	if err := roundTrip(old, "before", 10*time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Drop()
	during := dial(t, p.Addr())
	if err := roundTrip(old, "lost", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("open connection while dropping: %v, want a timeout", err)
	}
	p.Restore()
	for name, c := range map[string]net.Conn{"open before the drop": old, "made during the drop": during} {
		if err := roundTrip(c, "x", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection %s, after Restore: %v, want a timeout", name, err)
		}
	}
	if err := roundTrip(dial(t, p.Addr()), "back", 10*time.Second); err != nil {
		t.Fatalf("new connection after Restore: %v", err)
	}
	p.Cut() // ends the stranded connections too
	if err := roundTrip(old, "x", 10*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stranded connection after Cut: %v, want it closed", err)
	}
}
