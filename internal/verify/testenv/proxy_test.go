package testenv

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
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
