package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// A Proxy forwards TCP connections from a loopback port to a real service, and can
// take the service away without stopping it for the other tests that share it:
// Refuse stops listening and resets every connection, the way a stopped server or a
// firewall that rejects does; Cut accepts and closes, the way a restarting server or
// a load balancer with no backend does; Hang holds every connection open and
// forwards nothing, the way a stuck server does; Drop does the same but the
// connections it held stay silent after Restore, the way those behind a route that
// dropped packets do. A test points a client at Proxy.Addr and applies any of them
// under load.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu       sync.Mutex
	ln       net.Listener // nil while refusing
	stopped  bool         // the test ended
	mode     proxyMode
	changed  chan struct{} // closed and replaced whenever mode changes
	dropping bool          // set by Drop, cleared by Restore
	conns    map[net.Conn]*link
	accepted int
}

type proxyMode int

// A link is one client connection and, once dialed, its upstream connection.
type link struct {
	stranded bool // made or open during Drop: silent until closed; guarded by Proxy.mu
}

const (
	forwarding proxyMode = iota
	refusing
	hanging
)

// StartProxy starts a proxy to target ("127.0.0.1:5432") and stops it when the test
// ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, target: target, addr: ln.Addr().String(), ln: ln, changed: make(chan struct{}), conns: map[net.Conn]*link{}}
	go p.accept(ln)
	t.Cleanup(func() {
		p.mu.Lock()
		p.stopped = true
		if p.ln != nil {
			p.ln.Close()
			p.ln = nil
		}
		p.mu.Unlock()
		p.Cut()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Accepted returns how many connections the proxy has accepted since it started,
// including those it closed at once (Cut) or held (Hang): the connection attempts
// of its clients, except those Refuse turned away.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Cut closes every forwarded connection and refuses new ones (they are accepted and
// closed at once) until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(refusing)
	p.closeLocked(false)
}

// Refuse stops listening, so that new connections are refused by the kernel
// (ECONNREFUSED, as from a stopped server), and resets every forwarded connection
// (each side reads ECONNRESET), until Restore listens on the same port again.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	p.setLocked(refusing)
	p.closeLocked(true)
}

// closeLocked closes every tracked connection, with a reset when reset is set.
// p.mu must be held.
func (p *Proxy) closeLocked(reset bool) {
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok && reset {
			tc.SetLinger(0) // close with RST instead of FIN
		}
		c.Close()
	}
	clear(p.conns)
}

// Hang stops forwarding until Restore or Cut, without closing anything: bytes sent
// on open connections, in either direction, are held back, and new connections are
// accepted but neither answered nor forwarded. A client sees its calls hang until its
// own deadline, as behind a route that drops packets. Restore forwards what was held
// on the connections still open; Cut closes them.
func (p *Proxy) Hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(hanging)
}

// Retarget sends the connections made from now on to target; open ones stay with
// the server they reached, as behind a moved VIP or DNS name. A failover test
// repoints the proxy at a promoted replica, with Cut and Restore around it to
// reset the clients' connections.
func (p *Proxy) Retarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// Drop is Hang, except that the connections open when it starts or made while it
// lasts stay silent after Restore until they are closed: what is sent on them is
// discarded. Only connections made after Restore are forwarded. So behave the
// connections behind a route that dropped packets, until TCP retransmits (after a
// backoff that grows to minutes) or a timeout of the client ends them, and those a
// restarted stateful firewall or NAT forgot.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropping = true
	for _, l := range p.conns {
		l.stranded = true
	}
	p.setLocked(hanging)
}

// Restore lets connections through again, after Refuse, Cut or Hang. After Refuse
// it listens on the same port again, trying for up to 5s while the port is busy.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropping = false
	if p.ln == nil && !p.stopped {
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if p.ln, err = net.Listen("tcp", p.addr); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			p.t.Errorf("proxy: listening on %s again: %v", p.addr, err)
			return
		}
		go p.accept(p.ln)
	}
	p.setLocked(forwarding)
}

// setLocked changes the mode and wakes whatever waits in hang. p.mu must be held.
func (p *Proxy) setLocked(m proxyMode) {
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
}

// An action is what a connection does with the bytes it read.
type action int

const (
	forward action = iota
	discard        // a stranded link's
	stop           // the proxy refuses: close
)

// pass waits while the proxy hangs and says what l does with what it read: forward
// it, discard it (l is stranded) or stop (the proxy refuses; the caller closes its
// connections).
func (p *Proxy) pass(l *link) action {
	for {
		p.mu.Lock()
		m, ch, stranded := p.mode, p.changed, l.stranded
		p.mu.Unlock()
		switch {
		case m == refusing:
			return stop
		case stranded:
			return discard
		case m == forwarding:
			return forward
		}
		<-ch
	}
}

func (p *Proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		p.mu.Unlock()
		go p.serve(c)
	}
}

// track registers conns, of l, so that Cut closes them; it reports false (and
// registers nothing) when the proxy refuses. A link made while the proxy drops is
// stranded.
func (p *Proxy) track(l *link, conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == refusing {
		return false
	}
	if p.dropping {
		l.stranded = true
	}
	for _, c := range conns {
		p.conns[c] = l
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer c.Close()
	l := new(link)
	if !p.track(l, c) {
		return
	}
	defer p.untrack(c)
	// A connection made while the proxy hangs waits here, accepted and silent; one
	// made while it drops never reaches the service.
	switch p.pass(l) {
	case stop:
		return
	case discard:
		p.pipe(io.Discard, c, l, make(chan struct{}, 1))
		return
	}
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	up, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	if !p.track(l, up) {
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go p.pipe(up, c, l, done)
	go p.pipe(c, up, l, done)
	<-done
}

// pipe copies src to dst until either fails or the proxy refuses; while the proxy
// hangs, what it read waits, and once l is stranded it is discarded.
func (p *Proxy) pipe(dst io.Writer, src net.Conn, l *link, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			switch p.pass(l) {
			case stop:
				return
			case forward:
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// ProxyURL starts a Proxy to the host of the store URL rawURL (one host:port) and
// returns it with rawURL pointed at the proxy.
func ProxyURL(t testing.TB, rawURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := StartProxy(t, u.Host)
	u.Host = p.Addr()
	return p, u.String()
}
