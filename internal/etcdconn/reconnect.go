package etcdconn

import (
	"context"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/flurryid/flurry/internal/bound"
)

// Reconnecting. etcd's client (gRPC) connects again by itself after it lost its
// connection, but with gRPC's defaults it waits 1s, then 1.6 times longer after
// each failed attempt, up to 2 minutes, and gives an attempt 20s: a store back
// after a 6.5s refusal was used again 2.4 to 3.8s later, and an attempt that
// hung held the client for 20s. Open's clients use the settings below instead. Calls made while the client waits for a connection wait with it,
// within their own bound, and succeed as soon as it is up.
const (
	// reconnectFirst is the pause after the first failed attempt; each next pause
	// is reconnectGrowth times longer, up to reconnectMax, and each is spread by
	// reconnectJitter either way so that the nodes of a cluster do not all knock at
	// once. During an outage that refuses connections a client so tries about 2.5
	// times a second (one attempt per 320-480ms); after the store is back, its next
	// attempt comes within 480ms.
	reconnectFirst  = 100 * time.Millisecond
	reconnectGrowth = 1.6
	reconnectJitter = 0.2
	reconnectMax    = 400 * time.Millisecond
	// connectTimeout bounds one attempt: the TCP connection and the HTTP/2 (and
	// TLS) handshake. An attempt that hangs (a dropped SYN, a server that accepts
	// and says nothing) is given up after it and tried again, so that a store that
	// comes back is found within connectTimeout plus a pause. A handshake takes a
	// few round trips: well under a second unless a round trip takes 300ms.
	connectTimeout = time.Second
)

// connectParams are the gRPC settings above.
func connectParams() grpc.ConnectParams {
	return grpc.ConnectParams{
		Backoff: backoff.Config{BaseDelay: reconnectFirst, Multiplier: reconnectGrowth, Jitter: reconnectJitter, MaxDelay: reconnectMax},
		// gRPC gives an attempt the longer of this and the current pause.
		MinConnectTimeout: connectTimeout,
	}
}

// dialOptions are the gRPC options Open's clients get before the caller's own
// Client.DialOptions, which come after and so win: the reconnection settings, and a
// dialer that tracks each connection in conns, so that a call that got no answer
// closes those that went silent (bound.Conns). Without it, a connection that stays
// open and never answers again (a NAT or firewall that forgot it, a proxy without a
// backend) would carry every call until gRPC's keepalive gave up on it, and that
// runs only while a call waits and never within 10s.
func dialOptions(conns *bound.Conns) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithConnectParams(connectParams()), grpc.WithContextDialer(dialer(conns))}
}

// dialer dials an address as etcd's client gives it (host:port, unix:path or
// unix:///path) and tracks the connection in conns.
func dialer(conns *bound.Conns) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		network, address := "tcp", addr
		if p, ok := strings.CutPrefix(addr, "unix://"); ok {
			network, address = "unix", p
		} else if p, ok := strings.CutPrefix(addr, "unix:"); ok {
			network, address = "unix", p
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return conns.Track(c), nil
	}
}
