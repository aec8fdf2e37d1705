package bound

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// pair dials a loopback connection and returns the tracked client end and the
// server end.
func pair(t *testing.T, cs *Conns, ln net.Listener) (net.Conn, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return cs.Track(c), s
}

func TestConnsCloseSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var cs Conns
	answered, answeredSrv := pair(t, &cs, ln)
	silent, silentSrv := pair(t, &cs, ln)
	never, _ := pair(t, &cs, ln) // received nothing at all
	if _, ok := silent.(syscall.Conn); !ok {
		t.Error("a tracked TCP connection does not implement syscall.Conn")
	}
	// silent received data before the call started, answered after; fresh was
	// made after it started.
	buf := make([]byte, 16)
	silentSrv.Write([]byte("before"))
	if _, err := io.ReadFull(silent, buf[:6]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fresh, _ := pair(t, &cs, ln)
	answeredSrv.Write([]byte("after"))
	if _, err := io.ReadFull(answered, buf[:5]); err != nil {
		t.Fatal(err)
	}
	if n := cs.CloseSilent(start); n != 2 || cs.Len() != 2 {
		t.Fatalf("CloseSilent closed %d, %d left open; want 2 closed, 2 open", n, cs.Len())
	}
	if _, err := fresh.Write([]byte("x")); err != nil {
		t.Errorf("the connection made after the call started was closed: %v", err)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "never": never} {
		if _, err := c.Read(buf); !errors.Is(err, ErrClosedSilent) || !errors.Is(err, io.EOF) {
			t.Errorf("read on the %s connection: %v; want ErrClosedSilent, an io.EOF", name, err)
		}
		if _, err := c.Write(buf); !errors.Is(err, ErrClosedSilent) {
			t.Errorf("write on the %s connection: %v; want ErrClosedSilent", name, err)
		}
	}
	if _, err := answered.Write([]byte("x")); err != nil {
		t.Errorf("the connection that answered was closed: %v", err)
	}
	answered.Close()
	answered.Close()
	fresh.Close()
	if cs.Len() != 0 {
		t.Errorf("%d connections left after closing all", cs.Len())
	}
}

func TestOnNoAnswer(t *testing.T) {
	var got []time.Time
	c := Call{Timeout: time.Millisecond, OnNoAnswer: func(start time.Time) { got = append(got, start) }}
	before := time.Now()
	err := func() (err error) {
		ctx, end := c.Start(context.Background())
		defer end(&err)
		<-ctx.Done()
		return ctx.Err()
	}()
	if !errors.Is(err, ErrNoAnswer) || len(got) != 1 || got[0].Before(before) {
		t.Fatalf("a call that ran out of time: %v, OnNoAnswer called with %v", err, got)
	}
	c.Timeout = time.Hour
	for name, fail := range map[string]func(ctx context.Context, cancel func()) error{
		"refused":   func(context.Context, func()) error { return syscall.ECONNREFUSED },
		"cancelled": func(ctx context.Context, cancel func()) error { cancel(); return ctx.Err() },
		"no error":  func(context.Context, func()) error { return nil },
	} {
		parent, cancel := context.WithCancel(context.Background())
		err := func() (err error) {
			ctx, end := c.Start(parent)
			defer end(&err)
			return fail(ctx, cancel)
		}()
		cancel()
		if len(got) != 1 || errors.Is(err, ErrNoAnswer) {
			t.Errorf("%s: %v; OnNoAnswer called %d times in all, want once", name, err, len(got))
		}
	}
}
