package zkconn

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/internal/bound"
)

// Reconnecting. go-zookeeper connects again by itself after it lost its
// connection, trying the members in turn, but after each round of them that
// failed it pauses a whole second, and it gives a member that accepted the
// connection and says nothing ten times two thirds of the session timeout (27s
// with 4s) to answer its handshake. Open's clients use the settings below instead.
const (
	// roundFirst is the pause after the first round of the members that failed;
	// each next pause is roundGrowth times longer, up to roundMax, and each is
	// spread by roundJitter either way, so that the nodes of a cluster do not all
	// knock at once. After the ensemble is back, the next attempt so comes within
	// 480ms.
	roundFirst  = 100 * time.Millisecond
	roundGrowth = 1.6
	roundMax    = 400 * time.Millisecond
	roundJitter = 0.2
	// dialTimeout bounds one TCP connection attempt, and handshakeTimeout the
	// wait for a member's answer to the session handshake that follows: a member
	// that does not answer in time is given up for the next.
	dialTimeout      = time.Second
	handshakeTimeout = time.Second
)

// pause returns the pause after the n-th round in a row that failed (0 for the
// first).
func pause(n int) time.Duration {
	d := float64(roundFirst)
	for range n {
		d *= roundGrowth
		if d >= float64(roundMax) {
			d = float64(roundMax)
			break
		}
	}
	return time.Duration(d * (1 + roundJitter*(2*rand.Float64()-1)))
}

// link is what Open installs in its client: the members in turn with paced
// rounds (hosts), a dialer that tracks each connection (conns) and remembers the
// last failure, and the session's state from the client's events.
type link struct {
	hosts *hosts
	conns bound.Conns

	mu   sync.Mutex
	up   chan struct{} // closed while the client has a session
	has  bool
	last error // the last connection error
}

func newLink() *link {
	return &link{hosts: &hosts{stop: make(chan struct{})}, up: make(chan struct{})}
}

// event follows the client's session state. It must not block.
func (l *link) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev.State {
	case zk.StateHasSession:
		l.last = nil
		if !l.has {
			l.has = true
			close(l.up)
		}
	case zk.StateDisconnected, zk.StateConnecting, zk.StateExpired, zk.StateAuthFailed:
		// After StateExpired the client starts a new session by itself; flurry
		// keeps nothing in a session (no ephemeral nodes, no watches). The member
		// answered, so the new session is asked for at once, without a pause.
		if ev.State == zk.StateExpired {
			l.hosts.Connected()
		}
		if l.has {
			l.has = false
			l.up = make(chan struct{})
		}
	}
}

// wait returns once the client has a session, or ctx's error when it ends first.
func (l *link) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		up, has := l.up, l.has
		l.mu.Unlock()
		if has {
			return nil
		}
		select {
		case <-up:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *link) lastErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

func (l *link) setErr(err error) {
	l.mu.Lock()
	l.last = err
	l.mu.Unlock()
}

// dial is the client's Dialer: a TCP connection within dialTimeout, whose first
// answer must come within handshakeTimeout, tracked in conns.
func (l *link) dial(network, addr string, _ time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, dialTimeout)
	if err != nil {
		l.setErr(err)
		return nil, err
	}
	return l.conns.Track(&handshakeConn{Conn: c, link: l}), nil
}

func (l *link) close() { l.hosts.close() }

// handshakeConn caps the read deadlines of a connection until it has received
// something: go-zookeeper waits ten times two thirds of the session timeout for
// the answer to its handshake.
type handshakeConn struct {
	net.Conn
	link *link
	got  atomic.Bool
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.got.Store(true)
	} else if err != nil && !c.got.Load() {
		c.link.setErr(&net.OpError{Op: "handshake", Net: "tcp", Addr: c.RemoteAddr(), Err: err})
	}
	return n, err
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	if !c.got.Load() {
		if limit := time.Now().Add(handshakeTimeout); t.IsZero() || t.After(limit) {
			t = limit
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// hosts is the client's HostProvider: the members in the order go-zookeeper
// shuffled them, round after round, with a pause (see pause) after each round in
// which none gave a session.
type hosts struct {
	mu      sync.Mutex
	servers []string
	next    int
	tried   int // members tried since the last session
	fails   int // rounds in a row that failed
	stop    chan struct{}
	stopped bool
}

func (h *hosts) Init(servers []string) error {
	h.servers = servers
	return nil
}

func (h *hosts) Len() int { return len(h.servers) }

// Next returns the member to try next. After a whole round failed it pauses
// first. Once the client is closed it reports a restart of the rounds, which is
// where go-zookeeper's connection loop looks whether it should stop.
func (h *hosts) Next() (string, bool) {
	h.mu.Lock()
	if h.tried >= len(h.servers) {
		d := pause(h.fails)
		h.tried = 0
		h.fails++
		h.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-h.stop:
			t.Stop()
		}
		h.mu.Lock()
	}
	s := h.servers[h.next%len(h.servers)]
	h.next++
	h.tried++
	stopped := h.stopped
	h.mu.Unlock()
	return s, stopped
}

// Connected is told that the client got a session.
func (h *hosts) Connected() {
	h.mu.Lock()
	h.tried, h.fails = 0, 0
	h.mu.Unlock()
}

func (h *hosts) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.stopped = true
		close(h.stop)
	}
}
