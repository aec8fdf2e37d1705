package leafzk

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/conformance"
)

// freeAddr returns a loopback address nothing listens on: a connect is refused.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// leafHTTP serves Leaf's snowflake route at addr as leaf-server does (text/plain
// numbers, a 404 elsewhere), until the test ends or stop is called.
func leafHTTP(t testing.TB, addr string) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/snowflake/get/{key}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
		w.Write([]byte("2127931999069929523"))
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	stop = func() { srv.Close() }
	t.Cleanup(stop)
	return stop
}

// TestProbe: the probe tells a flurry server (by its Flurry-Server header alone,
// whatever its info body: a megabyte of it here, plain or over TLS, or behind a
// proxy that passes only Leaf's route) from anything else that answers (a Leaf
// server), takes a listener that accepts and does not answer for a Leaf server,
// and finds nobody only where a connection is refused.
func TestProbe(t *testing.T) {
	t.Parallel()
	big := strings.Repeat(`{"namespace":"n","fields":[]},`, 40000)
	flurry := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()[ServerHeader] = []string{ServerValue}
		w.Write([]byte(big))
	})
	proxied := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/snowflake/get/") {
			w.Header()[ServerHeader] = []string{ServerValue}
			w.Write([]byte("1"))
			return
		}
		http.NotFound(w, r)
	})
	plain := httptest.NewServer(flurry)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(flurry)
	defer tlsSrv.Close()
	behind := httptest.NewServer(proxied)
	defer behind.Close()
	leafAt := freeAddr(t)
	leafHTTP(t, leafAt)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // accepts (the backlog) and never answers

	ctx := conformance.Context(t, 30*time.Second)
	for _, tc := range []struct {
		what, addr string
		want       sighting
		how        string
	}{
		{"a flurry server with a large info body", strings.TrimPrefix(plain.URL, "http://"), aFlurry, ""},
		{"a flurry server over TLS", strings.TrimPrefix(tlsSrv.URL, "https://"), aFlurry, ""},
		{"a flurry server behind a proxy of Leaf's routes", strings.TrimPrefix(behind.URL, "http://"), aFlurry, ""},
		{"a Leaf server", leafAt, aLeaf, "answers GET /v1/info with 404 and answers GET /api/snowflake/get/leafzk-probe with 200"},
		{"a listener that does not answer", silent.Addr().String(), aLeaf, "did not answer HTTP"},
		{"a closed port", freeAddr(t), nobody, ""},
	} {
		got, how, err := probe(ctx, tc.addr, 300*time.Millisecond)
		if err != nil || got != tc.want || !strings.Contains(how, tc.how) {
			t.Errorf("%s (%s): probe = %v, %q, %v; want %v, %q", tc.what, tc.addr, got, how, err, tc.want, tc.how)
		}
	}
}

// TestFlurryWrittenNodeWaitsFresh: a node that flurry wrote last is not taken at
// once from another address, since a Leaf server may have started there since
// without writing it (its start check failed against flurry's last timestamp, and
// it runs on its workerID.properties); it is taken once it has been left alone for
// fresh=. A flurry server listening at the node's address itself (SetListening),
// where no Leaf server can be serving, takes it back at once.
func TestFlurryWrittenNodeWaitsFresh(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	addr := freeAddr(t)
	ctx := conformance.Context(t, time.Minute)
	probeOn := func(o *Options) { o.NoProbe = false }
	a := openStore(t, servers, name, func(o *Options) { probeOn(o); o.Addr = addr })
	l, err := a.Acquire(ctx, "default", 1024, "flurry a", time.Minute)
	if err != nil {
		t.Fatalf("a flurry server registering %s: %v", addr, err)
	}
	if _, err := a.Renew(ctx, l, time.Minute, l.Mark+1); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, l, l.Mark+1); err != nil {
		t.Fatal(err)
	}

	// flurry restarted at its own address: back at once.
	back := openStore(t, servers, name, func(o *Options) { probeOn(o); o.Addr = addr })
	back.SetListening(tcpAddr(t, addr))
	start := time.Now()
	l, err = back.Acquire(ctx, "default", 1024, "flurry a again", time.Minute)
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("flurry restarted at its own address %s: %+v, %v after %v; want the worker back at once", addr, l, err, time.Since(start))
	}
	if err := back.Release(ctx, l, l.Mark+1); err != nil {
		t.Fatal(err)
	}

	// Another flurry server taking the node over waits for fresh=.
	other := openStore(t, servers, name, func(o *Options) { probeOn(o); o.Replace = addr })
	released := time.Now()
	l, err = other.Acquire(ctx, "default", 1024, "flurry b", time.Minute)
	if !errors.Is(err, lease.ErrNoFreeValue) || !strings.Contains(err.Error(), "fresh=") {
		t.Fatalf("replace=%s right after flurry wrote the node: %+v, %v; want ErrNoFreeValue until the node has been left alone for fresh=", addr, l, err)
	}
	waitFor(t, "the node to be left alone for fresh=", func() bool {
		l, err = other.Acquire(ctx, "default", 1024, "flurry b", time.Minute)
		return err == nil
	})
	if d := time.Since(released); d < minFresh-time.Second {
		t.Fatalf("taken %v after flurry's last write; fresh= is %v", d, minFresh)
	}
}

func tcpAddr(t testing.TB, addr string) net.Addr {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSilentLeafProbed: a Leaf server that runs without writing its node (here:
// its node left alone, its HTTP route answering) is never taken over, however old
// its node; once it stops answering, flurry takes the worker ID. While flurry
// holds it, a Leaf server that starts answering at the node's address (started
// there while ZooKeeper was unreachable) stops flurry's generator within a few
// renewals, without ever writing the node.
func TestSilentLeafProbed(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	addr := freeAddr(t)
	leaf := newLeaf(t, servers, name, addr, nil)
	if err := leaf.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	leaf.halt() // its node is never written again
	stop := leafHTTP(t, addr)

	st := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Replace = addr })
	ctx := conformance.Context(t, time.Minute)
	for end := time.Now().Add(minFresh + 2*leafInterval); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		l, err := st.Acquire(ctx, "default", 1024, "flurry", time.Minute)
		if !errors.Is(err, lease.ErrNoFreeValue) {
			t.Fatalf("flurry took worker %d of the Leaf server answering at %s (err %v)", l.Value, addr, err)
		}
	}
	_, err := st.Acquire(ctx, "default", 1024, "flurry", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "a server runs at "+addr) {
		t.Fatalf("Acquire beside the silent Leaf server: %v; want it named", err)
	}

	stop()
	g, s, err := startFlurry(t, st, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatalf("the Leaf server stopped answering, but flurry did not take its worker ID: %v", err)
	}
	if v := s.Status().Value; v != leaf.workerID {
		t.Fatalf("flurry took worker %d; want %d", v, leaf.workerID)
	}
	issue(t, g, s, 10)

	// A Leaf server starts at the address without ZooKeeper: it answers, and
	// never writes the node.
	leafHTTP(t, addr)
	began := time.Now()
	waitFor(t, "flurry to stop issuing beside the silent Leaf server", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := g.Next(ctx)
		return errors.Is(err, lease.ErrLost)
	})
	if d := time.Since(began); d > 3*2*time.Second {
		t.Fatalf("flurry went on issuing for %v beside the Leaf server; the renewal probe must stop it within a few renewals", d)
	}
	recs, err := st.List(ctx, "default")
	if err != nil || len(recs) != 1 || recs[0].Token != "" {
		t.Fatalf("List = %+v, %v; want the worker given up", recs, err)
	}

}
