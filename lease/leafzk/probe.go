package leafzk

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A Leaf server does not always write its node: one started while ZooKeeper was
// unreachable, or whose start check failed, runs on the worker ID of its
// workerID.properties file without ever writing; one whose clock stepped back
// skips its writes until the clock is past its last write. The node's age cannot
// tell those from a stopped server, so before it takes a worker ID, and while it
// holds one, the store asks the node's address itself whether a server runs
// there.

// ServerHeader is the response header with which a flurry server answers GET
// /v1/info and Leaf's route /api/snowflake/get/{key}: "Flurry-Server: flurry".
// The probe recognises a flurry server by it, and takes every other answer for a
// Leaf server's.
const (
	ServerHeader = "Flurry-Server"
	ServerValue  = "flurry"
)

// DefaultProbeTimeout is the default of Options.ProbeTimeout.
const DefaultProbeTimeout = 2 * time.Second

// A sighting is what a probe of an address found.
type sighting int

const (
	// nobody: no connection could be made (refused, no route to the host, or no
	// answer to the connect within the timeout).
	nobody sighting = iota
	// aFlurry: a flurry server answered (its ServerHeader).
	aFlurry
	// aLeaf: something else answered, or it accepted the connection and gave no
	// HTTP answer within the timeout: a Leaf server, for all flurry can tell.
	aLeaf
)

// The probe asks flurry's info route, then Leaf's own route, which a flurry
// server behind a proxy that passes only Leaf's routes answers too.
const (
	probeInfo = "/v1/info"
	probeLeaf = "/api/snowflake/get/leafzk-probe"
)

// probe asks addr (host:port) whether a server runs there. It returns what it
// found and, for aLeaf, how the server answered (stable text, for messages). An
// error means the probe could not be made (the caller's context ended, or a local
// failure): nothing is known.
func probe(ctx context.Context, addr string, timeout time.Duration) (sighting, string, error) {
	var answered []string
	secure := false
	for _, path := range [...]string{probeInfo, probeLeaf} {
		status, flurry, err := probeOnce(ctx, addr, path, timeout, secure)
		if err == nil && status == http.StatusBadRequest && !secure {
			// Go's HTTPS server answers plain HTTP with 400 "Client sent an HTTP
			// request to an HTTPS server": ask again over TLS.
			secure = true
			status, flurry, err = probeOnce(ctx, addr, path, timeout, true)
		}
		var nc noConnection
		switch {
		case errors.As(err, &nc):
			if len(answered) == 0 {
				return nobody, "", nil
			}
			// It answered a moment ago: gone now, or refusing more connections.
			return aLeaf, strings.Join(answered, " and "), nil
		case err != nil && ctx.Err() != nil:
			return nobody, "", ctx.Err()
		case errors.Is(err, errLocal):
			return nobody, "", err
		case err != nil:
			return aLeaf, "accepts connections but did not answer HTTP within " + timeout.String(), nil
		case flurry:
			return aFlurry, "", nil
		}
		answered = append(answered, "answers GET "+path+" with "+strconv.Itoa(status))
	}
	return aLeaf, strings.Join(answered, " and "), nil
}

// noConnection is a dial that found nobody: refused, unreachable, or timed out.
type noConnection struct{ err error }

func (e noConnection) Error() string { return e.err.Error() }

// errLocal marks a dial that failed on this host (out of file descriptors, and
// the like): nothing is known of the address.
var errLocal = errors.New("the probe could not be made")

// probeOnce sends GET path to addr and returns the answer's status and whether
// it carries flurry's ServerHeader.
func probeOnce(ctx context.Context, addr, path string, timeout time.Duration, secure bool) (status int, flurry bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		if isAbsent(err) {
			return 0, false, noConnection{err}
		}
		return 0, false, fmt.Errorf("%w: %w", errLocal, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	var c net.Conn = conn
	if secure {
		// Only the answer's header is read: who the server is, not whether its
		// certificate is trusted.
		tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: hostOf(addr)}) //nolint:gosec // see above
		if err := tc.HandshakeContext(dctx); err != nil {
			return 0, false, err
		}
		c = tc
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", errLocal, err)
	}
	req.Header.Set("User-Agent", "flurry-leafzk-probe")
	req.Close = true
	if err := req.Write(c); err != nil {
		return 0, false, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	io.CopyN(io.Discard, resp.Body, 512) // the header decides; the body may be large
	return resp.StatusCode, resp.Header.Get(ServerHeader) == ServerValue, nil
}

// isAbsent reports whether a dial's error means that no server can be reached at
// the address: refused, no route to the host or network, or no answer to the
// connect within the timeout.
func isAbsent(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTDOWN) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// probeTarget is the address the probe asks for the Leaf node of addr (Leaf's
// ip:port): its IP, and ProbePort when set, else its registered port.
func (s *Store) probeTarget(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr
	}
	ip, port := addr[:i], addr[i+1:]
	if s.o.ProbePort != 0 {
		port = strconv.Itoa(s.o.ProbePort)
	}
	return net.JoinHostPort(ip, port)
}

// own reports whether target (host:port) is the address this server listens on
// (SetListening): no other server can be listening there, so it is not probed.
func (s *Store) own(target string) bool {
	s.mu.Lock()
	l := s.listening
	s.mu.Unlock()
	if l == "" {
		return false
	}
	lh, lp, err := net.SplitHostPort(l)
	th, tp, err2 := net.SplitHostPort(target)
	if err != nil || err2 != nil || lp != tp {
		return false
	}
	tip := net.ParseIP(th)
	if tip == nil {
		return false
	}
	if lip := net.ParseIP(lh); lip != nil && !lip.IsUnspecified() {
		return lip.Equal(tip)
	}
	if lh != "" && net.ParseIP(lh) == nil {
		return false // a host name: not compared
	}
	// Listening on every address of the host: the target is ours if its IP is.
	if tip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(tip) {
			return true
		}
	}
	return false
}

// SetListening tells the store the address this server listens on (flurry serve
// gives its listener's): the probe skips a Leaf node whose address it is, and a
// node of that address that flurry wrote last is taken back at once, since no
// Leaf server can be serving there while this one is. Call it before the first
// Acquire.
func (s *Store) SetListening(addr net.Addr) {
	if addr == nil {
		return
	}
	s.mu.Lock()
	s.listening = addr.String()
	s.mu.Unlock()
}

// A watch is the renewal probe of one held worker ID: while flurry holds it, the
// addresses of the worker's Leaf nodes are asked now and then whether a Leaf
// server runs there (started while ZooKeeper was unreachable, it runs on the
// worker ID without writing the node, which the version check would catch).
type watch struct {
	token   string
	running bool
	last    time.Time // when the last probe ended
	found   string    // a Leaf server answered: the message for Renew
}

// probeEvery is the least time between two renewal probes of one worker ID.
const probeEvery = time.Second

// watching reports, for Renew of lease token of worker v, what the renewal probe
// found (empty: nothing), and starts the next probe when one is due. When sync
// (the first renewal of a lease this store did not claim: a lease resumed from a
// journal), it probes before it returns.
func (s *Store) watching(ctx context.Context, v int64, token string) string {
	if s.o.NoProbe {
		return ""
	}
	s.mu.Lock()
	w := s.watches[v]
	fresh := w == nil || w.token != token
	if fresh {
		w = &watch{token: token}
		s.watches[v] = w
	}
	if w.found != "" {
		s.mu.Unlock()
		return w.found
	}
	due := !w.running && time.Since(w.last) >= probeEvery
	if due {
		w.running = true
	}
	s.mu.Unlock()
	if !due {
		return ""
	}
	if fresh {
		s.probeWorker(ctx, v, w)
		s.mu.Lock()
		defer s.mu.Unlock()
		return w.found
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.probeWorker(s.bg, v, w)
	}()
	return ""
}

// claimed records that the store has just probed worker v for lease token (or
// had no need to), so that its first renewal does not probe again at once.
func (s *Store) claimed(v int64, token string) {
	s.mu.Lock()
	s.watches[v] = &watch{token: token, last: time.Now()}
	s.mu.Unlock()
}

// unwatch ends the renewal probe of worker v.
func (s *Store) unwatch(v int64) {
	s.mu.Lock()
	delete(s.watches, v)
	s.mu.Unlock()
}

// probeWorker probes the address of every Leaf node of worker v but this
// server's own, and records a Leaf server found in w.
func (s *Store) probeWorker(ctx context.Context, v int64, w *watch) {
	var found string
	defer func() {
		s.mu.Lock()
		w.running, w.last = false, time.Now()
		if found != "" {
			w.found = found
		}
		s.mu.Unlock()
	}()
	// Bounded: a probe that hangs must not stop the next from being started.
	ctx, cancel := context.WithTimeout(ctx, 4*s.o.ProbeTimeout+10*time.Second)
	defer cancel()
	nodes, err := s.nodes(ctx)
	if err != nil {
		return // ZooKeeper's trouble is the renewal's to report
	}
	for _, n := range nodes {
		if n.seq != v {
			continue
		}
		target := s.probeTarget(n.addr)
		if s.own(target) {
			continue
		}
		what, how, err := probe(ctx, target, s.o.ProbeTimeout)
		if err == nil && what == aLeaf {
			found = fmt.Sprintf("a Leaf server runs at %s (it %s) with worker ID %d without writing its node %s (started while ZooKeeper was unreachable, on its workerID.properties, or its start check failed): both issuing with one worker ID would repeat IDs, so this server stops and waits until that one stops",
				target, how, v, s.leafPath(n.name))
			return
		}
	}
}
