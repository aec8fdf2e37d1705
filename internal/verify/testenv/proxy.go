package testenv

import (
	"net"
	"sync"
	"testing"
)

// A Proxy forwards TCP connections from a loopback port to a real service, and can
// take the service away without stopping it for the other tests that share it: Cut
// refuses, the way a dead server or a rejecting firewall does, and Hang holds every
// connection open and forwards nothing, the way a dropped route or a stuck server
// does. A test points a client at Proxy.Addr and applies either under load.
type Proxy struct {
	ln net.Listener

	mu      sync.Mutex
	target  string // where new connections go
	mode    proxyMode
	changed chan struct{} // closed and replaced whenever mode changes
	conns   map[net.Conn]struct{}
}

type proxyMode int

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
	p := &Proxy{target: target, ln: ln, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every forwarded connection and refuses new ones (they are accepted and
// closed at once) until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(refusing)
	for c := range p.conns {
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

// Restore lets connections through again, after Cut or Hang.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(forwarding)
}

// setLocked changes the mode and wakes whatever waits in hang. p.mu must be held.
func (p *Proxy) setLocked(m proxyMode) {
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
}

// pass waits while the proxy hangs and reports whether data may be forwarded: true
// when forwarding, false when refusing (the caller closes its connections).
func (p *Proxy) pass() bool {
	for {
		p.mu.Lock()
		m, ch := p.mode, p.changed
		p.mu.Unlock()
		switch m {
		case forwarding:
			return true
		case refusing:
			return false
		}
		<-ch
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// track registers conns so that Cut closes them; it reports false (and registers
// nothing) when the proxy refuses.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == refusing {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
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
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	// A connection made while the proxy hangs waits here, accepted and silent.
	if !p.pass() {
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
	if !p.track(up) {
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go p.pipe(up, c, done)
	go p.pipe(c, up, done)
	<-done
}

// pipe copies src to dst until either fails or the proxy refuses; while the proxy
// hangs, what it read waits.
func (p *Proxy) pipe(dst, src net.Conn, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
