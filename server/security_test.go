package server

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/verify/testenv"
)

// serveReal serves s on a loopback listener with Serve (h2c, the configured
// timeouts), as flurry serve does, and returns its base URL.
func serveReal(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	scheme := "http://"
	if s.TLS() {
		scheme = "https://"
	}
	return scheme + ln.Addr().String()
}

// TestAnonymousSeesNothing walks every registered route (routeList) and every
// procedure of the IDService over Connect JSON, gRPC and gRPC-Web, without a
// token, against a server whose namespaces all need tokens. It gets /healthz and
// the dashboard's static files (docs/security.md lists both), and otherwise
// errors that name nothing it did not send: no other namespace, tag, scope,
// store, address, path, version or metric.
func TestAnonymousSeesNothing(t *testing.T) {
	testenv.NeedScheme(t, "redis")
	dir := t.TempDir()
	redisURL := testenv.Redis.URL(t)
	key := "flurry-anon-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	yaml := "data_dir: " + dir + `
access: {admin_token_env: [TEST_ADMIN]}
namespaces:
  snow:
    strategy: snowflake
    token_env: [TEST_TOKEN]
    snowflake: {lease: {scope: hidden-scope-x}}
  seg:
    strategy: segment
    token_env: [TEST_TOKEN]
    segment: {tag: hidden-tag-x, create: {step: 100}}
  red:
    strategy: redis
    token_env: [TEST_TOKEN]
    redis: {url: '` + redisURL + `', key: ` + key + `, node: worker=3}
  uu:
    strategy: uuidv7
    token_env: [TEST_TOKEN]
  oid:
    strategy: objectid
    token_env: [TEST_TOKEN]
`
	s, _ := newServer(t, yaml, nil)
	base := serveReal(t, s)
	names := []string{"snow", "seg", "red", "uu", "oid"}
	// What must never reach an anonymous caller.
	markers := []string{dir, "127.0.0.1", "6379", "sqlite", "file:", "redis:", "hidden-tag", "hidden-scope", key,
		"flurry_", "go_gc", "process_", "time:41", "lease", "worker", `"version"`, "test"}

	// Requests naming each namespace, a tag, and nothing that exists.
	subjects := append(append([]string{}, names...), "hidden-tag-x", "nope")
	check := func(t *testing.T, what, subject string, code int, body string) {
		t.Helper()
		for _, m := range markers {
			if strings.Contains(body, m) && !strings.Contains(subject, m) {
				t.Errorf("%s: %d %q shows %q", what, code, body, m)
			}
		}
		for _, n := range names {
			if n != subject && regexp.MustCompile(`\b`+n+`\b`).MatchString(body) {
				t.Errorf("%s: %d %q names namespace %s, which the caller did not", what, code, body, n)
			}
		}
	}
	dashFiles := map[string]bool{"/": true, "/assets/dashboard.js": true, "/assets/dashboard.css": true, "/assets/favicon.svg": true,
		"/css/bootstrap.min.css": true} // static files: the dashboard's and the stylesheet Leaf's pages link
	walked := 0
	for _, rt := range s.routeList() {
		method, pattern, _ := strings.Cut(rt.pattern, " ")
		if pattern == "" {
			method, pattern = "", method
		}
		type target struct{ url, subject string }
		var targets []target
		switch {
		case strings.HasPrefix(pattern, "/flurry.v1.IDService/"):
			continue // below, per procedure and protocol
		case strings.Contains(pattern, "{namespace}"), strings.Contains(pattern, "{key}"):
			for _, n := range subjects {
				p := strings.NewReplacer("{namespace}", n, "{key}", n, "{id}", "1").Replace(pattern)
				targets = append(targets, target{p, n}, target{p + "?count=10&format=text", n})
			}
		case pattern == "/decodeSnowflakeId":
			for _, n := range subjects {
				targets = append(targets, target{pattern + "?snowflakeId=1&namespace=" + n, n})
			}
			targets = append(targets, target{pattern + "?snowflakeId=1", ""})
		case pattern == "/v1/info":
			targets = append(targets, target{pattern, ""})
			for _, n := range subjects {
				targets = append(targets, target{pattern + "?namespace=" + n, n})
			}
		case pattern == "/{$}":
			targets = append(targets, target{"/", ""})
		case pattern == "/assets/":
			targets = append(targets, target{"/assets/dashboard.js", ""}, target{"/assets/dashboard.css", ""}, target{"/assets/favicon.svg", ""}, target{"/assets/nope", ""})
		case pattern == "/":
			targets = append(targets, target{"/nope", "nope"}, target{"/v2/snow/next", "snow"})
		default:
			targets = append(targets, target{pattern, ""})
		}
		methods := []string{method}
		if method == "" {
			methods = []string{"GET", "POST"}
		}
		for _, m := range methods {
			for _, tg := range targets {
				req, _ := http.NewRequest(m, base+tg.url, nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				walked++
				body := string(b)
				path, _, _ := strings.Cut(tg.url, "?")
				what := m + " " + tg.url
				switch {
				case path == "/healthz":
					if res.StatusCode != 200 || body != "ok\n" {
						t.Errorf("%s: %d %q", what, res.StatusCode, body)
					}
				case dashFiles[path]:
					if res.StatusCode != 200 {
						t.Errorf("%s: %d", what, res.StatusCode)
					}
					continue // static files: the same on every server, no state
				case res.StatusCode < 400:
					t.Errorf("%s: %d %q: an anonymous caller was served", what, res.StatusCode, body)
				}
				check(t, what, tg.subject, res.StatusCode, body)
			}
		}
	}
	if walked < 60 {
		t.Fatalf("walked only %d requests", walked)
	}

	// The IDService, every procedure, every protocol.
	protocols := map[string]flurryv1connect.IDServiceClient{
		"connect json":  flurryv1connect.NewIDServiceClient(http.DefaultClient, base, connect.WithProtoJSON()),
		"connect proto": flurryv1connect.NewIDServiceClient(http.DefaultClient, base),
		"grpc":          flurryv1connect.NewIDServiceClient(h2cClient(), base, connect.WithGRPC()),
		"grpc-web":      flurryv1connect.NewIDServiceClient(http.DefaultClient, base, connect.WithGRPCWeb()),
	}
	for proto, c := range protocols {
		ctx := context.Background()
		for _, n := range append(subjects, "") {
			what := proto + " " + n
			_, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: n, Count: 5}))
			wantDenied(t, what+" Next", err)
			check(t, what+" Next", n, 0, errText(err))
			_, err = c.Decode(ctx, connect.NewRequest(&flurryv1.DecodeRequest{Namespace: n, Id: "1"}))
			wantDenied(t, what+" Decode", err)
			check(t, what+" Decode", n, 0, errText(err))
			_, err = c.Info(ctx, connect.NewRequest(&flurryv1.InfoRequest{Namespace: n}))
			wantDenied(t, what+" Info", err)
			check(t, what+" Info", n, 0, errText(err))
		}
	}

	// The same routes open with the right tokens: the walk above was not vacuous.
	if code, _, body := get(t, base+"/v1/uu/next", "Authorization", "Bearer "+testToken); code != 200 {
		t.Errorf("with the token: %d %q", code, body)
	}
	if code, _, body := get(t, base+"/metrics", "Authorization", "Bearer "+testAdmin); code != 200 || !strings.Contains(body, `flurry_lease_held{namespace="snow"} 1`) {
		t.Errorf("metrics with the admin token: %d", code)
	}
	if code, _, body := get(t, base+"/readyz", "Authorization", "Bearer "+testAdmin); code != 200 || body != "ready\n" {
		t.Errorf("readyz with the admin token: %d %q", code, body)
	}
}

func hashHex(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated, connect.CodeNotFound:
	default:
		t.Errorf("%s: %v, want unauthenticated or not found", what, err)
	}
}

// TestTokens: a missing and a wrong token are both 401 with different messages
// (and WWW-Authenticate error="invalid_token" for the wrong one); a token given
// as its SHA-256 in the configuration works; an admin token opens the operators'
// views but no IDs; public_readyz gives probes the status word only.
func TestTokens(t *testing.T) {
	sum := sha256.Sum256([]byte("a-token-that-is-only-hashed"))
	yaml := `
access: {admin_tokens: ["sha256:` + hashHex(testAdmin) + `"], public_readyz: true}
namespaces:
  h:
    strategy: snowflake
    tokens: ["sha256:` + hex.EncodeToString(sum[:]) + `"]
  open:
    strategy: uuidv7
`
	_, hs := newServer(t, yaml, nil)
	u := hs.URL
	code, h, missing := get(t, u+"/v1/h/next")
	if code != 401 || !strings.Contains(missing, "needs a token") || h.Get("Www-Authenticate") != `Bearer realm="flurry"` {
		t.Errorf("missing: %d %q %q", code, missing, h.Get("Www-Authenticate"))
	}
	for _, auth := range []string{"Bearer not-the-token-at-all", "Basic eDp5", "Bearer sha256:" + hex.EncodeToString(sum[:]), "Bearer " + testAdmin} {
		code, h, wrong := get(t, u+"/v1/h/next", "Authorization", auth)
		if code != 401 || wrong == missing || !strings.Contains(wrong, "not valid") || !strings.Contains(h.Get("Www-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%q: %d %q %q", auth, code, wrong, h.Get("Www-Authenticate"))
		}
	}
	if code, _, body := get(t, u+"/v1/h/next", "Authorization", "Bearer a-token-that-is-only-hashed"); code != 200 {
		t.Errorf("the hashed token: %d %q", code, body)
	}
	if code, _, body := get(t, u+"/v1/open/next"); code != 200 {
		t.Errorf("a namespace without tokens: %d %q", code, body)
	}
	// Info: the open namespace to anyone, the other with its token or the admin's.
	_, _, body := get(t, u+"/v1/info")
	if !strings.Contains(body, `"open"`) || strings.Contains(body, `"h"`) {
		t.Errorf("anonymous info: %q", body)
	}
	_, _, body = get(t, u+"/v1/info", "Authorization", "Bearer "+testAdmin)
	if !strings.Contains(body, `"h"`) || !strings.Contains(body, "file://") {
		t.Errorf("admin info: %q", body)
	}
	_, _, body = get(t, u+"/v1/info", "Authorization", "Bearer a-token-that-is-only-hashed")
	if !strings.Contains(body, `"h"`) || strings.Contains(body, "file://") {
		t.Errorf("namespace token info: %q", body)
	}
	// Operators' views.
	if code, _, body := get(t, u+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("public readyz: %d %q", code, body)
	}
	if code, _, _ := get(t, u+"/metrics"); code != 401 {
		t.Errorf("anonymous metrics: %d", code)
	}
	if code, _, _ := get(t, u+"/metrics", "Authorization", "Bearer a-token-that-is-only-hashed"); code != 401 {
		t.Errorf("metrics with a namespace token: %d", code)
	}
	if code, _, _ := get(t, u+"/metrics", "Authorization", "Bearer "+testAdmin); code != 200 {
		t.Errorf("metrics with the admin token: %d", code)
	}
}

// TestTokenRate: with token_rate, a token's bucket runs dry and the next request
// gets 429 with Retry-After, on the plain route, the Leaf route and the RPC.
func TestTokenRate(t *testing.T) {
	yaml := `
limits: {token_rate: 0.001, token_burst: 3}
namespaces:
  a: {strategy: snowflake, token_env: [TEST_TOKEN]}
`
	_, hs := newServer(t, yaml, nil)
	auth := []string{"Authorization", "Bearer " + testToken}
	for i := 0; i < 3; i++ {
		if code, _, body := get(t, hs.URL+"/v1/a/next", auth...); code != 200 {
			t.Fatalf("request %d: %d %q", i+1, code, body)
		}
	}
	code, h, body := get(t, hs.URL+"/v1/a/next", auth...)
	if code != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("over the rate: %d %q Retry-After %q", code, body, h.Get("Retry-After"))
	}
	if code, h, body := get(t, hs.URL+"/api/snowflake/get/a", auth...); code != 429 || h.Get("Retry-After") == "" {
		t.Errorf("leaf over the rate: %d %q", code, body)
	}
	c := flurryv1connect.NewIDServiceClient(http.DefaultClient, hs.URL)
	req := connect.NewRequest(&flurryv1.NextRequest{Namespace: "a"})
	req.Header().Set("Authorization", "Bearer "+testToken)
	if _, err := c.Next(context.Background(), req); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("rpc over the rate: %v", err)
	}
	// Without a token the answer is 401, not 429: the bucket is the token's.
	if code, _, _ := get(t, hs.URL+"/v1/a/next"); code != 401 {
		t.Errorf("no token: %d", code)
	}
}

// TestBudget: with the IDs budget held, every protocol refuses with 503 (or
// Unavailable) and Retry-After, and serves again once it is given back; an RPC
// larger than the whole budget is refused as a bad request.
func TestBudget(t *testing.T) {
	yaml := `
max_count: 1000000
limits: {max_ids_in_flight: 10000}
namespaces:
  a: {strategy: snowflake}
  u: {strategy: uuidv7}
`
	s, hs := newServer(t, yaml, nil)
	c := flurryv1connect.NewIDServiceClient(http.DefaultClient, hs.URL)
	ctx := context.Background()
	if !s.budget.take(10000) {
		t.Fatal("the budget is not free at the start")
	}
	for _, p := range []string{"/v1/a/next?count=2", "/v1/u/next?count=5000"} {
		if code, h, body := get(t, hs.URL+p); code != 503 || h.Get("Retry-After") != "1" {
			t.Errorf("%s with the budget held: %d %q", p, code, body)
		}
	}
	// One ID holds no more than its connection: served even now.
	for _, p := range []string{"/v1/a/next", "/api/snowflake/get/a"} {
		if code, _, body := get(t, hs.URL+p); code != 200 {
			t.Errorf("%s with the budget held: %d %q", p, code, body)
		}
	}
	if _, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "u", Count: 10})); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("rpc with the budget held: %v", err)
	}
	s.budget.give(10000)
	if code, _, body := get(t, hs.URL+"/v1/u/next?count=300000&format=text"); code != 200 || strings.Count(body, "\n") != 300000 {
		t.Errorf("a streamed batch larger than the budget: %d, %d lines", code, strings.Count(body, "\n"))
	}
	if res, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "u", Count: 2500})); err != nil || len(res.Msg.TextIds) != 2500 {
		t.Errorf("rpc of a quarter of the budget: %v", err)
	}
	if _, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "a", Count: 2501})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("rpc above a quarter of the budget: %v", err)
	}
	// RPCs may hold three quarters of the budget; the rest stays for streamed
	// requests and single IDs.
	if !s.budget.take(5001) {
		t.Fatal("budget")
	}
	if _, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "a", Count: 2500})); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("rpc beyond three quarters: %v", err)
	}
	if code, _, body := get(t, hs.URL+"/v1/a/next?count=2048"); code != 200 {
		t.Errorf("a streamed piece with RPCs at their share: %d %q", code, body)
	}
	s.budget.give(5001)
	if n := s.budget.used.Load(); n != 0 {
		t.Errorf("%d IDs of the budget still held after every request ended", n)
	}
}

// failingText is a text strategy that fails after its first n IDs.
type failingText struct{ left int }

func (f *failingText) appendNext(_ context.Context, dst []byte, n int, sep byte, quote bool) ([]byte, error) {
	if f.left < n {
		return dst, errors.New("store at 10.1.2.3:5432 user=secret is down")
	}
	f.left -= n
	for range n {
		if quote {
			dst = append(dst, `"x"`...)
		} else {
			dst = append(dst, 'x')
		}
		dst = append(dst, sep)
	}
	return dst, nil
}

func (f *failingText) decodeID(string) (*flurryv1.DecodeResponse, error) {
	return nil, errors.New("no")
}

// TestStreamAbort: a streamed batch whose generator fails after the first piece
// is written breaks the response (the client's read fails) rather than ending
// it as a short body that looks whole; one that fails before anything is written
// gets its 503, whose text names no store.
func TestStreamAbort(t *testing.T) {
	s, hs := newServer(t, "namespaces:\n  f: {strategy: uuidv7}\n", nil)
	s.namespaces["f"].text = &failingText{left: 3 * pieceText}
	for _, format := range []string{"text", "json"} {
		s.namespaces["f"].text = &failingText{left: 3 * pieceText}
		res, err := http.Get(hs.URL + "/v1/f/next?count=10000&format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || err == nil {
			t.Errorf("%s: %d, read %d bytes, err %v: want a broken stream", format, res.StatusCode, len(b), err)
		}
	}
	s.namespaces["f"].text = &failingText{}
	code, h, body := get(t, hs.URL+"/v1/f/next?count=10000")
	if code != 503 || h.Get("Retry-After") == "" || strings.Contains(body, "10.1.2.3") || strings.Contains(body, "secret") {
		t.Errorf("fails at once: %d %q", code, body)
	}
}

// TestTrickleBody: a request body sent one byte a second is cut once
// limits.read_timeout has passed, long before the body would be complete, on the
// RPC route and on a plain route.
func TestTrickleBody(t *testing.T) {
	s, _ := newServer(t, "limits: {read_timeout: 2s}\nnamespaces:\n  a: {strategy: snowflake}\n", nil)
	base := serveReal(t, s)
	addr := strings.TrimPrefix(base, "http://")
	for _, head := range []string{
		"POST /flurry.v1.IDService/Next HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
		"GET /v1/a/next HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := conn.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
		closed := make(chan struct{})
		go func() {
			io.Copy(io.Discard, bufio.NewReader(conn)) // until the server closes
			close(closed)
		}()
		sent := 0
	trickle:
		for sent < 60 {
			select {
			case <-closed:
				break trickle
			case <-time.After(time.Second):
			}
			if _, err := conn.Write([]byte("{")); err != nil {
				break
			}
			sent++
		}
		conn.Close()
		select {
		case <-closed:
		default:
			<-closed
		}
		if sent >= 60 {
			t.Errorf("%s: the server still read the body after %d bytes at 1 byte/s (read_timeout 2s)", strings.SplitN(head, "\r", 2)[0], sent)
		}
		t.Logf("%s: cut after %v, %d body bytes", strings.SplitN(head, "\r", 2)[0], time.Since(start).Round(100*time.Millisecond), sent)
	}
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flurry test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: k, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a certificate for a server (127.0.0.1) or a client.
func (ca *testCA) issue(t *testing.T, serial int64, server bool) tls.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "flurry test " + strconv.FormatInt(serial, 10)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
}

func writePair(t *testing.T, dir, name string, c tls.Certificate) (cert, key string) {
	t.Helper()
	kb, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// TestMutualTLS: with tls.client_ca, a client without a certificate, or with one
// from another CA, is refused in the handshake; one with a certificate of the CA
// is served, over HTTP/1.1 and HTTP/2 (gRPC).
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t), newTestCA(t)
	cert, key := writePair(t, dir, "server", ca.issue(t, 2, true))
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, ca.pem, 0o600)
	s, _ := newServer(t, "tls: {cert: "+cert+", key: "+key+", client_ca: "+caFile+"}\nnamespaces:\n  a: {strategy: snowflake}\n", nil)
	base := serveReal(t, s)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
	}
	for name, c := range map[string]*http.Client{"no certificate": client(), "another CA": client(other.issue(t, 3, false))} {
		res, err := c.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			t.Errorf("%s: served %d", name, res.StatusCode)
		}
	}
	good := client(ca.issue(t, 4, false))
	res, err := good.Get(base + "/v1/a/next")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 {
		t.Fatalf("%d over %s", res.StatusCode, res.Proto)
	}
	rc := flurryv1connect.NewIDServiceClient(good, base, connect.WithGRPC())
	if r, err := rc.Next(context.Background(), connect.NewRequest(&flurryv1.NextRequest{Namespace: "a", Count: 3})); err != nil || len(r.Msg.Ids) != 3 {
		t.Fatalf("grpc with a client certificate: %v", err)
	}
}
