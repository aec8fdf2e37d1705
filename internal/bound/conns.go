package bound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Conns keeps the open connections of one store's client, so that a call that ran
// out of time can close those that went silent with it (CloseSilent, from
// Call.OnNoAnswer). The zero Conns is ready to use; it is safe for concurrent use.
//
// A connection can stay open and never answer again: behind a firewall or NAT that
// forgot it, or a proxy whose backend went away; behind a route that dropped
// packets, it answers only when TCP retransmits, after a backoff that grows to
// minutes. The clients keep using such a connection. etcd's client sends every
// call on it until its keepalive gives up, which it does only while a call waits
// and never within 10s; go-redis and database/sql close the one a call timed out
// on, but the idle ones in their pools fail the next calls one by one.
type Conns struct {
	mu   sync.Mutex
	base time.Time // when the first connection was tracked; times are kept as offsets from it
	open map[*conn]struct{}
}

// ErrClosedSilent is the error of a read or a write on a connection CloseSilent
// closed. It wraps io.EOF: to its client the connection ended, and clients that
// retry a call whose connection ended (go-redis) take another.
var ErrClosedSilent = fmt.Errorf("connection closed: it received nothing while a call waited for an answer (%w)", io.EOF)

// Track returns c wrapped so that Conns keeps it until it is closed. The wrapper
// implements syscall.Conn when c does, so that a pool's health check still sees
// the socket.
func (cs *Conns) Track(c net.Conn) net.Conn {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.open == nil {
		cs.open = map[*conn]struct{}{}
		cs.base = time.Now()
	}
	tc := &conn{Conn: c, owner: cs}
	tc.lastRead.Store(int64(time.Since(cs.base))) // a connection made during a call is not judged by it
	cs.open[tc] = struct{}{}
	if sc, ok := c.(syscall.Conn); ok {
		return &sysConn{tc, sc}
	}
	return tc
}

// CloseSilent closes every connection that was open at start, the time a call
// started that then got no answer in time, and has received nothing since, and
// returns how many it closed. The connection the call waited on is one; the others
// went silent with it or were idle, and cannot be told from dead ones without a
// call that may wait as long. A connection that was alive costs its client one
// reconnection. A connection made since start is left to its client's connect
// timeout: it may be the one that finds the store back.
func (cs *Conns) CloseSilent(start time.Time) int {
	cs.mu.Lock()
	since := int64(start.Sub(cs.base))
	var silent []*conn
	for c := range cs.open {
		if c.lastRead.Load() < since {
			silent = append(silent, c)
		}
	}
	cs.mu.Unlock()
	for _, c := range silent {
		c.silenced.Store(true)
		c.Close()
	}
	return len(silent)
}

// Len returns how many connections are open.
func (cs *Conns) Len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.open)
}

// conn is a tracked connection.
type conn struct {
	net.Conn
	owner    *Conns
	lastRead atomic.Int64 // when a read last returned data, or else when it was made, as an offset from owner.base
	silenced atomic.Bool  // CloseSilent closed it
	once     sync.Once
}

func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.lastRead.Store(int64(time.Since(c.owner.base)))
	}
	if err != nil && c.silenced.Load() && errors.Is(err, net.ErrClosed) {
		err = ErrClosedSilent
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && c.silenced.Load() && errors.Is(err, net.ErrClosed) {
		err = ErrClosedSilent
	}
	return n, err
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.owner.mu.Lock()
		delete(c.owner.open, c)
		c.owner.mu.Unlock()
	})
	return c.Conn.Close()
}

// sysConn is a tracked connection whose socket a health check can inspect.
type sysConn struct {
	*conn
	sc syscall.Conn
}

func (c *sysConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }
