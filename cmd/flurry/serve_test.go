package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/verify/testenv"
)

// serveProc is a running `flurry serve`.
type serveProc struct {
	cmd    *exec.Cmd
	base   string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

func (p *serveProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitLog reports whether the log holds want within d. What the process writes
// reaches the log through a pipe that os/exec copies in a goroutine of its own, so
// a line written before the process answered a request may still be on its way
// (on a loaded machine, for a while) when the answer is read.
func (p *serveProc) waitLog(want string, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if strings.Contains(p.log(), want) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// serveStartCPU bounds a start of flurry serve in the CPU time the process spends,
// not in wall time, which grows with the machine's load (at a load of 19 a start
// can take longer than the 30 s this once waited): a start takes well under a
// second of CPU time, so one that spends 30 s without answering is stuck, not slow.
const serveStartCPU = 30 * time.Second

// serveStartWall bounds in wall time a start that spends little CPU time, waiting
// on a store, say: past the 69 s a lease's default TTL can make a start wait for a
// value still held, so that a test sees what serve then logs.
const serveStartWall = 3 * time.Minute

// startServe runs bin serve with args on a free port and waits until /healthz
// answers. client is used for the health check (TLS needs its own).
func startServe(t *testing.T, bin string, client *http.Client, scheme string, env []string, args ...string) *serveProc {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := &serveProc{base: scheme + "://" + addr, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"serve", "--listen", addr}, args...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		p.done <- nil
	})
	bound := testenv.NewStartBound(p.cmd.Process.Pid, serveStartCPU, serveStartWall)
	for {
		res, err := client.Get(p.base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("flurry serve exited: %v\n%s", err, p.log())
		case <-time.After(50 * time.Millisecond):
		}
		if passed := bound.Passed(); passed != "" {
			t.Fatalf("flurry serve did not answer within %s: %v\n%s", passed, err, p.log())
		}
	}
}

// stop sends sig and waits for the process to end; it returns the exit error.
func (p *serveProc) stop(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("flurry serve did not stop on %v\n%s", sig, p.log())
		return nil
	}
}

func fetch(t *testing.T, c *http.Client, method, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

// textIDs asks for n IDs as text and returns them.
func textIDs(t *testing.T, c *http.Client, base, ns string, n int, hdr ...string) []flurry.ID {
	t.Helper()
	code, _, body := fetch(t, c, "GET", fmt.Sprintf("%s/v1/%s/next?count=%d&format=text", base, ns, n), hdr...)
	if code != 200 {
		t.Fatalf("%s: %d %q", ns, code, body)
	}
	var ids []flurry.ID
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		id, err := flurry.ParseID(line)
		if err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		ids = append(ids, id)
	}
	if len(ids) != n {
		t.Fatalf("%s: %d IDs, want %d", ns, len(ids), n)
	}
	return ids
}

func buildServe(t *testing.T) string {
	t.Helper()
	return testenv.BuildFlurry(t)
}

// TestServeBinary runs `flurry serve` as a real process: the embedded default's
// routes and error statuses, the Leaf routes, a graceful stop that hands segment
// ranges back, kill -9 and restarts with no duplicate ID across the whole run, a
// clock behind the mark (503), and a configuration with tokens and TLS.
func TestServeBinary(t *testing.T) {
	bin := buildServe(t)
	c := &http.Client{Timeout: 30 * time.Second}
	data := t.TempDir()
	seen := map[string]map[flurry.ID]bool{"default": {}, "segment": {}}
	record := func(ns string, ids []flurry.ID) {
		t.Helper()
		for _, id := range ids {
			if seen[ns][id] {
				t.Fatalf("namespace %s: ID %d issued twice", ns, id)
			}
			seen[ns][id] = true
		}
	}

	p := startServe(t, bin, c, "http", nil, "--data", data)
	// stderr reaches the test through a pipe and a copying goroutine: wait for it.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.log(), "curl '"+p.base+"/v1/default/next'") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if l := p.log(); !strings.Contains(l, "listening on "+p.base) || !strings.Contains(l, "curl '"+p.base+"/v1/default/next'") {
		t.Errorf("the start message does not say where it listens and how to ask:\n%s", l)
	}
	var lastSegment flurry.ID
	t.Run("routes", func(t *testing.T) {
		u := p.base
		code, h, body := fetch(t, c, "GET", u+"/v1/default/next?count=2")
		var js struct {
			Namespace string   `json:"namespace"`
			IDs       []string `json:"ids"`
		}
		if code != 200 || h.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &js) != nil || js.Namespace != "default" || len(js.IDs) != 2 {
			t.Fatalf("%d %q", code, body)
		}
		for _, s := range js.IDs {
			id, _ := flurry.ParseID(s)
			record("default", []flurry.ID{id})
		}
		code, _, body = fetch(t, c, "GET", u+"/v1/segment/next?count=3&format=number")
		var jn struct{ IDs []flurry.ID }
		if code != 200 || json.Unmarshal([]byte(body), &jn) != nil || len(jn.IDs) != 3 || !strings.Contains(body, "[1,2,3]") {
			t.Fatalf("%d %q", code, body)
		}
		record("segment", jn.IDs)
		record("default", textIDs(t, c, u, "default", 20000))
		seg := textIDs(t, c, u, "segment", 5000)
		record("segment", seg)
		lastSegment = seg[len(seg)-1]

		id := js.IDs[0]
		code, _, body = fetch(t, c, "GET", u+"/v1/default/decode/"+id)
		if code != 200 || !strings.Contains(body, `"worker"`) || !strings.Contains(body, `"strategy":"snowflake"`) && !strings.Contains(body, `"strategy": "snowflake"`) {
			t.Fatalf("decode: %d %q", code, body)
		}
		code, _, body = fetch(t, c, "GET", u+"/v1/info")
		if code != 200 || !strings.Contains(body, "file://"+filepath.Join(data, "segments")) || !strings.Contains(body, "leases") {
			t.Fatalf("info: %d %q", code, body)
		}
		code, _, body = fetch(t, c, "GET", u+"/api/segment/get/segment")
		if sid, err := flurry.ParseID(body); code != 200 || err != nil {
			t.Fatalf("leaf segment: %d %q", code, body)
		} else {
			record("segment", []flurry.ID{sid})
			lastSegment = sid
		}
		code, _, body = fetch(t, c, "GET", u+"/api/snowflake/get/whatever")
		sf, err := flurry.ParseID(body)
		if code != 200 || err != nil {
			t.Fatalf("leaf snowflake: %d %q", code, body)
		}
		record("default", []flurry.ID{sf})
		code, _, body = fetch(t, c, "GET", u+"/decodeSnowflakeId?snowflakeId="+body)
		var leaf map[string]string
		if code != 200 || json.Unmarshal([]byte(body), &leaf) != nil || len(leaf) != 3 || leaf["sequenceId"] == "" {
			t.Fatalf("leaf decode: %d %q", code, body)
		}
		code, _, body = fetch(t, c, "GET", u+"/api/segment/get/nope")
		if code != 500 || !strings.Contains(body, `"status":500`) {
			t.Fatalf("leaf error: %d %q", code, body)
		}
		for _, e := range []struct {
			path string
			code int
		}{{"/v1/nope/next", 404}, {"/v1/default/next?count=0", 400}, {"/v1/default/next?count=100001", 400}, {"/v1/default/decode/x1", 400}} {
			code, _, body := fetch(t, c, "GET", u+e.path)
			if code != e.code || strings.Count(body, "\n") != 1 || !strings.Contains(body, `"error"`) {
				t.Errorf("%s: %d %q, want %d", e.path, code, body, e.code)
			}
		}
		// The IDService over gRPC (h2c) and Connect JSON, from the real process.
		var protos http.Protocols
		protos.SetUnencryptedHTTP2(true)
		for name, rc := range map[string]flurryv1connect.IDServiceClient{
			"grpc":    flurryv1connect.NewIDServiceClient(&http.Client{Transport: &http.Transport{Protocols: &protos}}, u, connect.WithGRPC()),
			"connect": flurryv1connect.NewIDServiceClient(c, u, connect.WithProtoJSON()),
		} {
			res, err := rc.Next(context.Background(), connect.NewRequest(&flurryv1.NextRequest{Namespace: "segment", Count: 4}))
			if err != nil || len(res.Msg.Ids) != 4 {
				t.Fatalf("%s Next: %v", name, err)
			}
			for _, id := range res.Msg.Ids {
				record("segment", []flurry.ID{flurry.ID(id)})
				lastSegment = max(lastSegment, flurry.ID(id))
			}
			if _, err := rc.Next(context.Background(), connect.NewRequest(&flurryv1.NextRequest{Namespace: "nope"})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("%s Next nope: %v", name, err)
			}
		}
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			if code, _, body := fetch(t, c, "GET", u+path); code != 200 {
				t.Errorf("%s: %d %q", path, code, body)
			}
		}
		_, _, body = fetch(t, c, "GET", u+"/metrics")
		if !strings.Contains(body, `flurry_ids_issued_total{namespace="default"} 20003`) {
			t.Errorf("metrics do not count the IDs issued:\n%s", grepLines(body, "flurry_ids_issued"))
		}
	})

	// A graceful stop hands the segment range back: the next run continues at once
	// after the last ID handed out.
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.log())
	}
	if !strings.Contains(p.log(), "segment ranges handed back") {
		t.Errorf("no shutdown message:\n%s", p.log())
	}
	p = startServe(t, bin, c, "http", nil, "--data", data)
	next := textIDs(t, c, p.base, "segment", 1)
	if next[0] != lastSegment+1 {
		t.Errorf("after a graceful stop the segment went on at %d, want %d (the handed-back range)", next[0], lastSegment+1)
	}
	record("segment", next)
	record("default", textIDs(t, c, p.base, "default", 10000))
	record("segment", textIDs(t, c, p.base, "segment", 3000))

	// kill -9: nothing is handed back or released; the restart must still issue
	// no ID twice (a new node value or above the mark; a new segment range).
	if err := p.stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("kill -9 ended the process with status 0")
	}
	p = startServe(t, bin, c, "http", nil, "--data", data)
	record("default", textIDs(t, c, p.base, "default", 10000))
	record("segment", textIDs(t, c, p.base, "segment", 3000))
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.log())
	}

	// A clock an hour behind the mark of a fixed node value (a pool value behaves
	// the same with order: scope, TestServeStartupFaults): the snowflake namespace
	// must refuse with 503 and Retry-After, and /readyz say not ready.
	t.Run("clock behind", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "fixed.yaml")
		os.WriteFile(cfg, []byte("data_dir: '"+dir+"'\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake: {lease: {fixed: 1}}\n"), 0o600)
		p := startServe(t, bin, c, "http", nil, "--config", cfg)
		textIDs(t, c, p.base, "default", 10)
		if err := p.stop(t, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p = startServe(t, bin, c, "http", []string{"FLURRY_CLOCK_SKEW=-1h"}, "--config", cfg)
		code, h, body := fetch(t, c, "GET", p.base+"/v1/default/next")
		if code != 503 || h.Get("Retry-After") == "" {
			t.Fatalf("%d Retry-After %q %q", code, h.Get("Retry-After"), body)
		}
		if code, _, body := fetch(t, c, "GET", p.base+"/readyz"); code != 503 {
			t.Fatalf("readyz %d %q", code, body)
		}
	})

	t.Run("config tokens TLS", func(t *testing.T) {
		dir := t.TempDir()
		cert, key := writeTestCert(t, dir)
		cfg := filepath.Join(dir, "flurry.yaml")
		if err := os.WriteFile(cfg, []byte(`
data_dir: '`+filepath.Join(dir, "data")+`'
max_count: 500
tls: {cert: '`+cert+`', key: '`+key+`'}
namespaces:
  orders:
    strategy: snowflake
    token_env: [ORDERS_TOKEN]
    snowflake: {layout: twitter, node: datacenter=2}
  tickets:
    strategy: segment
    segment: {create: {step: 50, start: 1000}}
`), 0o600); err != nil {
			t.Fatal(err)
		}
		tc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		token := "orders-token-0123456789"
		p := startServe(t, bin, tc, "https", []string{"ORDERS_TOKEN=" + token}, "--config", cfg)
		if code, h, body := fetch(t, tc, "GET", p.base+"/v1/orders/next"); code != 401 || h.Get("Www-Authenticate") == "" {
			t.Fatalf("no token: %d %q", code, body)
		}
		if code, _, body := fetch(t, tc, "GET", p.base+"/v1/orders/next", "Authorization", "Bearer wrong-token-0123456789"); code != 401 {
			t.Fatalf("wrong token: %d %q", code, body)
		}
		ids := textIDs(t, tc, p.base, "orders", 100, "Authorization", "Bearer "+token)
		code, _, body := fetch(t, tc, "GET", p.base+"/v1/orders/decode/"+ids[0].String(), "Authorization", "Bearer "+token)
		if code != 200 || !strings.Contains(strings.ReplaceAll(body, " ", ""), `{"name":"datacenter","value":"2"}`) {
			t.Fatalf("decode: %d %q", code, body)
		}
		if got := textIDs(t, tc, p.base, "tickets", 1); got[0] != 1001 {
			t.Errorf("tickets start at %d, want 1001", got[0])
		}
		if code, _, body := fetch(t, tc, "GET", p.base+"/v1/tickets/next?count=501"); code != 400 || !strings.Contains(body, "max_count 500") {
			t.Errorf("max_count: %d %q", code, body)
		}
	})

	t.Run("bad config", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "bad.yaml")
		os.WriteFile(cfg, []byte("listen: x\nnamespaces:\n  a:\n    strategy: snowflake\n    snowflake: {layout: nope, colour: red}\n  b:\n    strategy: segment\n    token_env: [NOT_SET_ANYWHERE_X]\n"), 0o600)
		if out, err := exec.Command(bin, "serve", "--config", cfg, "--check").CombinedOutput(); err == nil || !strings.Contains(string(out), "configuration has 3 problems") {
			t.Errorf("--check of a bad file: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "serve", "--config", cfg).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Fatalf("exit %v\n%s", err, out)
		}
		// One problem per line, after a header line (docs/server.md).
		for _, want := range []string{"flurry: configuration has 4 problems:\n", "\n  " + cfg + ":1: listen", "\n  " + cfg + ":5: namespaces.a.snowflake.colour: unknown key", "\n  " + cfg + ":5: namespaces.a.snowflake.layout", "\n  " + cfg + ":8: namespaces.b.token_env.0: "} {
			if !strings.Contains(string(out), want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
	})
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeTestCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flurry test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}
