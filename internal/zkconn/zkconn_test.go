package zkconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/verify/testenv"
)

var kind = Kind{Package: "zkconn-test", DefaultPrefix: "flurry/test"}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		want      Options
		err       string // part of the error; "" for none
	}{
		{name: "plain", url: "zk://127.0.0.1:2181", want: Options{Servers: []string{"127.0.0.1:2181"}, DialTimeout: 5 * time.Second}},
		{name: "ensemble, default port, prefix", url: "zk://a:1,b,[::1]/ids/lease?dial_timeout=2s&request_timeout=3s",
			want: Options{Servers: []string{"a:1", "b:2181", "[::1]:2181"}, Prefix: "ids/lease", DialTimeout: 2 * time.Second, RequestTimeout: 3 * time.Second}},
		{name: "slashes around the prefix", url: "zk://a:1//ids/", want: Options{Servers: []string{"a:1"}, Prefix: "ids", DialTimeout: 5 * time.Second}},
		{name: "empty prefix", url: "zk://a:1/", want: Options{Servers: []string{"a:1"}, DialTimeout: 5 * time.Second}},
		{name: "bad scheme", url: "etcd://a:1", err: "scheme must be zk"},
		{name: "no host", url: "zk:///x", err: "name the servers"},
		{name: "empty host", url: "zk://a:1,,b:2", err: "host 2 of the URL's host list: empty"},
		{name: "bad port", url: "zk://a:x", err: "port must be a number"},
		{name: "user refused, password redacted", url: "zk://ann:secret@a:1", err: "ann:xxxxx@a:1: flurry does not authenticate"},
		{name: "dot component", url: "zk://a:1/x/../y", err: "not path components"},
		{name: "double slash inside", url: "zk://a:1/x//y", err: "not path components"},
		{name: "zookeeper's own", url: "zk://a:1/zookeeper/x", err: "ZooKeeper's own"},
		{name: "odd character", url: "zk://a:1/x%20y", err: "letters, digits"},
		{name: "unknown key", url: "zk://a:1?session_timeout=5s", err: "unknown key session_timeout"},
		{name: "bad timeout", url: "zk://a:1?dial_timeout=soon", err: "dial_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseURL(tc.url, "lease/zkstore")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "lease/zkstore: ") {
					t.Fatalf("ParseURL(%q) error = %v; want one with %q", tc.url, err, tc.err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tc.url, err)
			}
			if !slices.Equal(o.Servers, tc.want.Servers) || o.Prefix != tc.want.Prefix || o.DialTimeout != tc.want.DialTimeout || o.RequestTimeout != tc.want.RequestTimeout {
				t.Errorf("ParseURL(%q) = %+v; want %+v", tc.url, o, tc.want)
			}
		})
	}
}

// TestPause reads back the pauses between rounds of the members: a member that is
// back is tried again within half a second, and a client does not knock more than
// 20 times a second on an ensemble that refuses.
func TestPause(t *testing.T) {
	for n := range 10 {
		if d := pause(n); d < 50*time.Millisecond || d >= 500*time.Millisecond {
			t.Errorf("pause after %d failed rounds: %v; want from 50ms to under 500ms", n+1, d)
		}
	}
	if handshakeTimeout > 2*time.Second || dialTimeout > 2*time.Second {
		t.Errorf("a member may hold the client %v + %v; want at most 2s each", dialTimeout, handshakeTimeout)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func openT(t *testing.T, o Options) *Conn {
	t.Helper()
	c, err := Open(ctx(t), o, kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func servers(t *testing.T) []string {
	o, err := ParseURL(testenv.ZooKeeper.URL(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	return o.Servers
}

// silent listens on loopback and accepts connections that it never answers; it
// returns its address and a count of the connections accepted.
func silent(t *testing.T) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String(), &n
}

// TestOpenRefused: Open of a server that is not there fails after its dial
// timeout, not its context's, with the one line that names the server and why.
func TestOpenRefused(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	_, err := Open(ctx(t), Options{Servers: []string{addr}, DialTimeout: 300 * time.Millisecond}, kind)
	want := "zkconn-test: cannot reach ZooKeeper at " + addr + " within 300ms: dial tcp " + addr + ": connect: connection refused"
	if err == nil || err.Error() != want || !errors.Is(err, bound.ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open of a dead server: %v; want %q, matching bound.ErrNoAnswer", err, want)
	}
}

// TestSilentMemberSkipped: a member that accepts connections and never answers
// (a stuck server, a proxy without its backend) is given up within a second for
// the next, so Open reaches the real one within its dial timeout, whichever the
// client tries first (go-zookeeper shuffles them). go-zookeeper alone would wait
// ten times two thirds of the session timeout for the silent member's handshake.
func TestSilentMemberSkipped(t *testing.T) {
	real := servers(t)
	dead, accepted := silent(t)
	for range 4 {
		openT(t, Options{Servers: append([]string{dead}, real...), DialTimeout: 5 * time.Second})
	}
	t.Logf("the silent member was tried %d times in 4 opens", accepted.Load())
}

// TestCallBounded: a call to a member that stopped answering returns when its
// context ends, with an error naming the store that matches bound.ErrNoAnswer
// once the store's Call has its say, and the next call, once the member answers
// again, succeeds.
func TestCallBounded(t *testing.T) {
	p := testenv.StartProxy(t, servers(t)[0])
	c := openT(t, Options{Servers: []string{p.Addr()}})
	if _, _, err := c.Exists(ctx(t), "/"); err != nil {
		t.Fatal(err)
	}
	p.Hang()
	err := func() (err error) {
		cctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		cctx, end := c.Call.Start(cctx)
		defer end(&err)
		_, _, err = c.Exists(cctx, "/")
		return err
	}()
	p.Restore()
	if !errors.Is(err, bound.ErrNoAnswer) || !strings.Contains(err.Error(), "ZooKeeper store zk://"+p.Addr()+"/flurry/test") {
		t.Fatalf("a call to a hung member: %v; want a no-answer error naming the store", err)
	}
	t.Log(err)
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := c.Exists(cctx, "/"); err != nil {
		t.Fatalf("the first call after the member answered again: %v", err)
	}
}

// TestCallWhileUnreachable: a call made while no member can be reached fails at
// its deadline with "cannot reach ZooKeeper at ..." and the connection error.
func TestCallWhileUnreachable(t *testing.T) {
	p := testenv.StartProxy(t, servers(t)[0])
	c := openT(t, Options{Servers: []string{p.Addr()}})
	p.Refuse()
	defer p.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, _, err := c.Exists(cctx, "/")
		cancel()
		if err != nil && strings.HasPrefix(err.Error(), "cannot reach ZooKeeper at "+p.Addr()+": dial tcp") &&
			errors.Is(err, bound.ErrNoAnswer) && strings.HasSuffix(err.Error(), "connection refused") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a call while the member refuses: %v; want cannot reach ZooKeeper at %s: dial tcp ...: connection refused", err, p.Addr())
		}
	}
}

// TestCloseStopsDialing: a client closed while no member answers stops trying
// to connect: its connection loop ends.
func TestCloseStopsDialing(t *testing.T) {
	p := testenv.StartProxy(t, servers(t)[0])
	c := openT(t, Options{Servers: []string{p.Addr()}})
	p.Refuse()
	defer p.Restore()
	time.Sleep(500 * time.Millisecond)
	c.Close()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the client still tries to connect 10s after Close")
		}
	}
}

// TestNodes runs the calls against a real server: CreatePath, Create, Set with a
// version, Multi, GetAll with a missing node, Children, Delete.
func TestNodes(t *testing.T) {
	c := openT(t, Options{Servers: servers(t)})
	ctx := ctx(t)
	base := fmt.Sprintf("/flurry-test/zkconn/%d", time.Now().UnixNano())
	if err := c.CreatePath(ctx, base); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePath(ctx, base); err != nil {
		t.Fatalf("CreatePath of an existing path: %v", err)
	}
	if _, err := c.Create(ctx, base+"/a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, base+"/a", []byte("1"), 0); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second Create: %v; want zk.ErrNodeExists", err)
	}
	st, err := c.Set(ctx, base+"/a", []byte("2"), 0)
	if err != nil || st.Version != 1 || st.Mtime == 0 {
		t.Fatalf("Set = %+v, %v", st, err)
	}
	if _, err := c.Set(ctx, base+"/a", []byte("3"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("Set of an old version: %v; want zk.ErrBadVersion", err)
	}
	rs, err := c.Multi(ctx, &zk.CreateRequest{Path: base + "/b", Data: []byte("b"), Acl: zk.WorldACL(zk.PermAll)},
		&zk.SetDataRequest{Path: base + "/b", Data: []byte("b"), Version: 0})
	if err != nil || len(rs) != 2 || rs[1].Stat == nil || rs[1].Stat.Version != 1 {
		t.Fatalf("Multi = %+v, %v", rs, err)
	}
	nodes, err := c.GetAll(ctx, []string{base + "/a", base + "/none", base + "/b"})
	if err != nil || string(nodes[0].Data) != "2" || nodes[1].Stat != nil || string(nodes[2].Data) != "b" {
		t.Fatalf("GetAll = %+v, %v", nodes, err)
	}
	names, err := c.Children(ctx, base)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("Children = %q, %v", names, err)
	}
	for _, n := range []string{"/a", "/b", ""} {
		if err := c.Delete(ctx, base+n, -1); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _, err := c.Exists(ctx, base); ok || err != nil {
		t.Fatalf("Exists after Delete = %v, %v", ok, err)
	}
}
