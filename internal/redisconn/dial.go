package redisconn

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry/internal/bound"
)

// Dialing. go-redis counts the calls whose dials all failed, and once PoolSize
// did in a row it stops dialing: every call fails at once with the last dial
// error, and one goroutine dials again once a second until it gets through. A
// store refused for long enough (20 calls with the default pool of 10 per CPU on
// 2 CPUs, about 9s of a lease session's renewals) was so found again up to a
// second after it came back. Open's clients dial through dialer instead, which
// reports a failed dial to go-redis as a connection that fails on first use: the
// call fails with the dial's error as before, after go-redis retried it as a
// failed dial (max_retries, 3 by default: 4 dials in about half a second), and the
// next call dials again. During an outage that refuses connections a client so
// dials 4 times per call its store makes, and the first call after the store's
// return gets through.
//
// dialer also tracks every connection in conns, so that a call that got no answer
// closes the idle connections that went silent with it (bound.Conns): go-redis
// closes the connection a call timed out on, but not the idle ones, which would
// fail the next calls one by one.

// dialer wraps next, the client's own Dialer or go-redis's.
func dialer(next func(ctx context.Context, network, addr string) (net.Conn, error), conns *bound.Conns) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return &failedConn{err: &dialError{err}, addr: failedAddr{network, addr}}, nil
		}
		return conns.Track(c), nil
	}
}

// failoverDialer is go-redis's dialer of a failover client's connections (to the
// primary and to the sentinels), for wrapping in dialer.
func failoverDialer(f *redis.FailoverOptions) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return redis.NewDialer(&redis.Options{DialTimeout: f.DialTimeout, TLSConfig: f.TLSConfig})(ctx, network, addr)
	}
}

// failedConn is a dial that failed, as go-redis sees it: reading or writing
// returns the dial's error.
type failedConn struct {
	err  error
	addr failedAddr
}

func (c *failedConn) Read([]byte) (int, error)         { return 0, c.err }
func (c *failedConn) Write([]byte) (int, error)        { return 0, c.err }
func (c *failedConn) Close() error                     { return nil }
func (c *failedConn) LocalAddr() net.Addr              { return c.addr }
func (c *failedConn) RemoteAddr() net.Addr             { return c.addr }
func (c *failedConn) SetDeadline(time.Time) error      { return nil }
func (c *failedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *failedConn) SetWriteDeadline(time.Time) error { return nil }

// dialError is a failed dial's error as a failedConn returns it. go-redis strips
// one layer off the error of a connection's first use, as it would its own
// wrapping: this is the layer, so that the caller still gets the dial's
// *net.OpError, which names the address and which go-redis retries.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// failedAddr is the address a failed dial was for.
type failedAddr struct{ network, addr string }

func (a failedAddr) Network() string { return a.network }
func (a failedAddr) String() string  { return a.addr }
