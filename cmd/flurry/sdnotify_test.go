package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestServeNotifiesSystemd runs flurry serve in process the way systemd runs a
// Type=notify unit: with NOTIFY_SOCKET naming a unixgram socket the test listens
// on. READY=1 must come once the server answers, STOPPING=1 when it is told to stop,
// and serve must end cleanly.
func TestServeNotifiesSystemd(t *testing.T) {
	sockPath := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen unixgram: %v", err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sockPath)

	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- cliContext(t, ctx, "", "serve", "--data", t.TempDir(), "--listen", addr) }()

	recv := func(what string) string {
		t.Helper()
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			select {
			case r := <-done:
				t.Fatalf("waiting for %s: %v; serve ended: %+v", what, err, r)
			default:
			}
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return string(buf[:n])
	}
	ready := recv("READY=1")
	if !hasLine(ready, "READY=1") {
		t.Fatalf("first notification %q, want READY=1", ready)
	}
	// Ready means ready: the server answers at once, without a retry loop.
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("after READY=1: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("after READY=1: /readyz answered %s", res.Status)
	}

	cancel()
	if stopping := recv("STOPPING=1"); !hasLine(stopping, "STOPPING=1") {
		t.Errorf("second notification %q, want STOPPING=1", stopping)
	}
	select {
	case r := <-done:
		if r.code != 0 {
			t.Errorf("serve ended with %d: %s", r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "systemd notify") {
			t.Errorf("serve reported a notify failure: %s", r.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop within a minute of its context ending")
	}
	// Nothing more: one READY, one STOPPING.
	conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 512)); err == nil {
		t.Errorf("a third notification (%d bytes)", n)
	}
}

func hasLine(msg, line string) bool {
	for _, l := range strings.Split(msg, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestSDNotifyAbstract: systemd may name an abstract socket ("@name").
func TestSDNotifyAbstract(t *testing.T) {
	name := fmt.Sprintf("@flurry-test-notify-%d", time.Now().UnixNano())
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Skipf("no abstract unix sockets here: %v", err)
	}
	defer conn.Close()
	if err := sdNotify(name, "READY=1"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
}

// TestNotifyWithoutSocket: outside systemd nothing is sent and nothing is printed.
func TestNotifyWithoutSocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	var b strings.Builder
	notifySystemd(context.Background(), &b)()
	if b.Len() != 0 {
		t.Errorf("printed %q", b.String())
	}
}

// TestHealth: exit 0 and the body on 200, exit 1 with the status on anything else
// or no answer, exit 2 on a bad URL.
func TestHealth(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			fmt.Fprintln(w, "ready")
			return
		}
		http.Error(w, "not ready: namespace default: no lease held", http.StatusServiceUnavailable)
	}))
	defer ok.Close()
	if r := cli(t, "", "health", "--url", ok.URL+"/readyz"); r.code != 0 || r.stdout != "ready\n" {
		t.Errorf("healthy: %+v", r)
	}
	wantOneLineError(t, cli(t, "", "health", "--url", ok.URL+"/other"), 1, "503", "no lease held")
	closed := fmt.Sprintf("http://127.0.0.1:%d/readyz", testenv.FreePort(t))
	wantOneLineError(t, cli(t, "", "health", "--url", closed, "--timeout", "2s"), 1, "health")
	wantOneLineError(t, cli(t, "", "health", "--url", "::nope"), 2, "--url")
}
