package server

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/api/flurryv1"
	"github.com/flurryid/flurry/api/flurryv1/flurryv1connect"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/segment/segmenturl"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/verify/testenv"
)

const (
	testToken = "0123456789abcdef-secret"
	testAdmin = "admin-0123456789abcdef"
)

// newServer builds a server from YAML (data_dir is set to a temporary directory
// unless the text gives one) and serves it with httptest.
func newServer(t testing.TB, yaml string, clk clock.Clock) (*Server, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	if !strings.Contains(yaml, "data_dir:") {
		yaml = "data_dir: " + dir + "\n" + yaml
	}
	env := func(k string) (string, bool) {
		switch k {
		case "TEST_TOKEN":
			return testToken, true
		case "TEST_ADMIN":
			return testAdmin, true
		}
		return "", false
	}
	cfg, err := config.Parse("test.yaml", []byte(yaml), env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, Options{
		Config: cfg, OpenSegmentStore: segmenturl.Open, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Version: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.EnableHTTP2 = true
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, hs
}

const basicYAML = `
access:
  admin_token_env: [TEST_ADMIN]
namespaces:
  default:
    strategy: snowflake
  orders:
    strategy: segment
    segment:
      tag: order-tag
      create: {step: 100}
  secret:
    strategy: snowflake
    token_env: [TEST_TOKEN]
    snowflake:
      layout: twitter
      node: datacenter=1
`

func get(t *testing.T, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
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

func TestRoutes(t *testing.T) {
	_, hs := newServer(t, basicYAML, nil)
	u := hs.URL

	t.Run("next json", func(t *testing.T) {
		code, h, body := get(t, u+"/v1/default/next?count=3")
		if code != 200 || h.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s %q", code, h.Get("Content-Type"), body)
		}
		var res struct {
			Namespace string
			IDs       []string
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil {
			t.Fatal(err)
		}
		if res.Namespace != "default" || len(res.IDs) != 3 {
			t.Fatalf("%q", body)
		}
		prev := int64(-1)
		for _, s := range res.IDs {
			id, err := flurry.ParseID(s)
			if err != nil || int64(id) <= prev {
				t.Fatalf("%q: %v", body, err)
			}
			prev = int64(id)
		}
	})
	t.Run("next number", func(t *testing.T) {
		code, _, body := get(t, u+"/v1/orders/next?count=2&format=number")
		var res struct{ IDs []int64 }
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil || len(res.IDs) != 2 || res.IDs[1] != res.IDs[0]+1 {
			t.Fatalf("%d %q", code, body)
		}
	})
	t.Run("next text", func(t *testing.T) {
		for _, v := range []struct{ url, accept string }{{"/v1/default/next?count=5000&format=text", ""}, {"/v1/default/next?count=5000", "text/plain"}} {
			code, h, body := get(t, u+v.url, "Accept", v.accept)
			lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") || len(lines) != 5000 {
				t.Fatalf("%s: %d %s %d lines", v.url, code, h.Get("Content-Type"), len(lines))
			}
			seen := map[string]bool{}
			for _, l := range lines {
				if _, err := flurry.ParseID(l); err != nil || seen[l] {
					t.Fatalf("line %q: %v (or a duplicate)", l, err)
				}
				seen[l] = true
			}
		}
	})
	t.Run("large json count spans chunks", func(t *testing.T) {
		code, _, body := get(t, u+"/v1/orders/next?count=10000")
		var res struct{ IDs []string }
		if code != 200 {
			t.Fatalf("%d %q", code, body)
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.IDs) != 10000 {
			t.Fatalf("%v, %d IDs", err, len(res.IDs))
		}
	})
	t.Run("decode", func(t *testing.T) {
		_, _, body := get(t, u+"/v1/default/next?format=text")
		id := strings.TrimSpace(body)
		code, _, body := get(t, u+"/v1/default/decode/"+id)
		var res map[string]any
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
			t.Fatalf("%d %q", code, body)
		}
		ts, err := time.Parse(time.RFC3339, res["time"].(string))
		if err != nil || time.Since(ts) > time.Minute || time.Since(ts) < -time.Minute {
			t.Fatalf("time %v in %q", res["time"], body)
		}
		if res["strategy"] != "snowflake" || res["id"] != id {
			t.Fatalf("%q", body)
		}
	})
	t.Run("info", func(t *testing.T) {
		code, _, body := get(t, u+"/v1/info")
		if code != 200 || !strings.Contains(body, `"lease"`) || !strings.Contains(body, `"order-tag"`) {
			t.Fatalf("%d %q", code, body)
		}
	})
	t.Run("health", func(t *testing.T) {
		if code, _, body := get(t, u+"/healthz"); code != 200 || body != "ok\n" {
			t.Fatalf("%d %q", code, body)
		}
		if code, _, body := get(t, u+"/readyz", "Authorization", "Bearer "+testAdmin); code != 200 || body != "ready\n" {
			t.Fatalf("%d %q", code, body)
		}
	})
	t.Run("dashboard", func(t *testing.T) {
		if code, h, _ := get(t, u+"/"); code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /: %d %s", code, h.Get("Content-Type"))
		}
	})
	t.Run("metrics", func(t *testing.T) {
		code, _, body := get(t, u+"/metrics", "Authorization", "Bearer "+testAdmin)
		for _, m := range []string{"flurry_ids_issued_total{namespace=\"default\"}", "flurry_lease_held{namespace=\"default\"} 1",
			"flurry_segment_buffered_ids{namespace=\"orders\"}", "flurry_request_duration_seconds_bucket", "flurry_time_field_life_left_seconds",
			"flurry_sequence_overflow_waits_total", "flurry_clock_behind_events_total", "flurry_segment_runway_seconds", "flurry_segment_fetches_total"} {
			if code != 200 || !strings.Contains(body, m) {
				t.Errorf("no %s in /metrics", m)
			}
		}
	})
	t.Run("leaf", func(t *testing.T) {
		code, h, body := get(t, u+"/api/segment/get/order-tag")
		if _, err := flurry.ParseID(body); code != 200 || err != nil || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
			t.Fatalf("%d %q", code, body)
		}
		code, _, body = get(t, u+"/api/snowflake/get/anything")
		if _, err := flurry.ParseID(body); code != 200 || err != nil {
			t.Fatalf("%d %q", code, body)
		}
		code, _, body = get(t, u+"/api/segment/get/nope")
		var e map[string]any
		if code != 500 || json.Unmarshal([]byte(body), &e) != nil || e["status"] != 500.0 || e["error"] != "Internal Server Error" || e["path"] != "/api/segment/get/nope" {
			t.Fatalf("%d %q", code, body)
		}
		_, _, idText := get(t, u+"/api/snowflake/get/default")
		code, _, body = get(t, u+"/decodeSnowflakeId?snowflakeId="+idText)
		var d map[string]string
		if code != 200 || json.Unmarshal([]byte(body), &d) != nil || d["sequenceId"] == "" || d["workerId"] == "" || !strings.Contains(d["timestamp"], "(") {
			t.Fatalf("%d %q", code, body)
		}
		code, _, body = get(t, u+"/decodeSnowflakeId?snowflakeId=abc")
		if code != 200 || !strings.Contains(body, "errorMsg") {
			t.Fatalf("%d %q", code, body)
		}
		if code, _, body = get(t, u+"/decodeSnowflakeId"); code != 400 {
			t.Fatalf("%d %q", code, body)
		}
	})
}

func TestErrors(t *testing.T) {
	_, hs := newServer(t, basicYAML, nil)
	u := hs.URL
	for _, c := range []struct {
		name, path string
		hdr        []string
		code       int
		says       string
	}{
		{"unknown namespace", "/v1/nope/next", nil, 404, "unknown namespace"},
		{"unknown namespace decode", "/v1/nope/decode/1", nil, 404, "unknown namespace"},
		{"count zero", "/v1/default/next?count=0", nil, 400, "count"},
		{"count text", "/v1/default/next?count=abc", nil, 400, "count"},
		{"count negative", "/v1/default/next?count=-1", nil, 400, "count"},
		{"count above max", "/v1/default/next?count=100001", nil, 400, "max_count"},
		{"bad format", "/v1/default/next?format=xml", nil, 400, "format"},
		{"bad query escape", "/v1/default/next?count=%zz", nil, 400, "malformed"},
		{"malformed id", "/v1/default/decode/12x", nil, 400, "not an ID"},
		{"negative id", "/v1/default/decode/-5", nil, 400, "IDs are never negative"},
		{"negative id of a segment namespace", "/v1/orders/decode/-5", nil, 400, "IDs are never negative"},
		{"huge id", "/v1/default/decode/99999999999999999999", nil, 400, "not an ID"},
		{"no token", "/v1/secret/next", nil, 401, "token"},
		{"wrong token", "/v1/secret/next", []string{"Authorization", "Bearer wrong-wrong-wrong-wrong"}, 401, "token"},
		{"not bearer", "/v1/secret/next", []string{"Authorization", "Basic " + testToken}, 401, "token"},
		{"token decode", "/v1/secret/decode/1", nil, 401, "token"},
		{"leaf token", "/api/snowflake/get/secret", nil, 401, "token"},
		{"unknown route", "/v2/x", nil, 404, "no route"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, h, body := get(t, u+c.path, c.hdr...)
			if code != c.code || !strings.Contains(body, c.says) || strings.Count(body, "\n") != 1 {
				t.Fatalf("got %d %q, want %d saying %q on one line", code, body, c.code, c.says)
			}
			if code == 401 && h.Get("Www-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	code, _, body := get(t, u+"/v1/secret/next", "Authorization", "Bearer "+testToken)
	if code != 200 {
		t.Fatalf("with the token: %d %q", code, body)
	}
	code, _, body = get(t, u+"/v1/default/next?count=3", "Accept", "text/plain")
	if code != 200 {
		t.Fatalf("%d %q", code, body)
	}
	if code, _, body = get(t, u+"/v1/nope/next?format=text"); code != 404 || !strings.HasPrefix(body, "error: ") {
		t.Fatalf("text error: %d %q", code, body)
	}
}

// TestUnavailable starts a namespace on a node value whose mark is an hour ahead of
// the server's clock: it must answer 503 with Retry-After, and /readyz 503.
func TestUnavailable(t *testing.T) {
	dir := t.TempDir()
	yaml := "data_dir: " + dir + "\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      lease: {fixed: 3}\n"
	s1, hs1 := newServer(t, yaml, nil)
	if code, _, body := get(t, hs1.URL+"/v1/default/next"); code != 200 {
		t.Fatalf("%d %q", code, body)
	}
	hs1.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, hs := newServer(t, yaml, clock.Offset{Parent: clock.NewSystem(), By: -time.Hour})
	code, h, body := get(t, hs.URL+"/v1/default/next")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, "behind") {
		t.Fatalf("got %d Retry-After %q %q", code, h.Get("Retry-After"), body)
	}
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 3000 {
		t.Errorf("Retry-After %d, want about an hour", ra)
	}
	if code, _, body := get(t, hs.URL+"/readyz"); code != 503 || !strings.Contains(body, "default") {
		t.Fatalf("readyz %d %q", code, body)
	}
	if code, _, body := get(t, hs.URL+"/api/snowflake/get/x"); code != 500 {
		t.Fatalf("leaf %d %q", code, body)
	}
	c := flurryv1connect.NewIDServiceClient(http.DefaultClient, hs.URL)
	_, err := c.Next(context.Background(), connect.NewRequest(&flurryv1.NextRequest{Namespace: "default"}))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("rpc: %v", err)
	}
}

// h2cClient speaks HTTP/2 without TLS, as gRPC clients do.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

func TestRPC(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	// A real listener with Serve, so h2c (gRPC) is served as in production.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()
	clients := map[string]flurryv1connect.IDServiceClient{
		"connect json": flurryv1connect.NewIDServiceClient(http.DefaultClient, base, connect.WithProtoJSON()),
		"grpc":         flurryv1connect.NewIDServiceClient(h2cClient(), base, connect.WithGRPC()),
		"grpc-web":     flurryv1connect.NewIDServiceClient(http.DefaultClient, base, connect.WithGRPCWeb()),
	}
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			res, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "default", Count: 10}))
			if err != nil || len(res.Msg.Ids) != 10 {
				t.Fatalf("%v %v", res, err)
			}
			// packed_ids, over more than one piece and twice (its buffer is pooled).
			last := res.Msg.Ids[9]
			for range 2 {
				pres, err := c.Next(ctx, connect.NewRequest(&flurryv1.NextRequest{Namespace: "default", Count: 3000, PackedIds: true}))
				if err != nil || len(pres.Msg.Ids) != 0 || len(pres.Msg.PackedIds) != 8*3000 {
					t.Fatalf("packed: %d ids, %d bytes of packed_ids, %v", len(pres.Msg.GetIds()), len(pres.Msg.GetPackedIds()), err)
				}
				for b := pres.Msg.PackedIds; len(b) > 0; b = b[8:] {
					id := int64(binary.LittleEndian.Uint64(b))
					if id <= last {
						t.Fatalf("packed: ID %d after %d", id, last)
					}
					last = id
				}
			}
			d, err := c.Decode(ctx, connect.NewRequest(&flurryv1.DecodeRequest{Namespace: "default", Id: strconv.FormatInt(res.Msg.Ids[0], 10)}))
			if err != nil || d.Msg.Time == "" || len(d.Msg.Fields) != 1 {
				t.Fatalf("%v %v", d, err)
			}
			info, err := c.Info(ctx, connect.NewRequest(&flurryv1.InfoRequest{}))
			if err != nil || len(info.Msg.Namespaces) != 2 || info.Msg.Namespaces[0].Lease == nil || info.Msg.Namespaces[1].Segment == nil {
				t.Fatalf("%v %v", info, err)
			}
			if info.Msg.Namespaces[0].Lease.Store != "" || len(info.Msg.Namespaces[1].Segment.Stores) != 0 {
				t.Errorf("store addresses shown without the admin token: %v", info.Msg)
			}
			ireq := connect.NewRequest(&flurryv1.InfoRequest{})
			ireq.Header().Set("Authorization", "Bearer "+testAdmin)
			info, err = c.Info(ctx, ireq)
			if err != nil || len(info.Msg.Namespaces) != 3 || info.Msg.Namespaces[2].Layout == nil || info.Msg.Namespaces[0].Lease.Store == "" {
				t.Fatalf("with the admin token: %v %v", info, err)
			}
			for _, e := range []struct {
				req  *flurryv1.NextRequest
				code connect.Code
			}{
				{&flurryv1.NextRequest{Namespace: "nope"}, connect.CodeNotFound},
				{&flurryv1.NextRequest{Namespace: "default", Count: 1 << 30}, connect.CodeInvalidArgument},
				{&flurryv1.NextRequest{Namespace: "secret"}, connect.CodeUnauthenticated},
			} {
				if _, err := c.Next(ctx, connect.NewRequest(e.req)); connect.CodeOf(err) != e.code {
					t.Errorf("%v: %v, want %v", e.req, err, e.code)
				}
			}
			req := connect.NewRequest(&flurryv1.NextRequest{Namespace: "secret", Count: 2})
			req.Header().Set("Authorization", "Bearer "+testToken)
			if res, err := c.Next(ctx, req); err != nil || len(res.Msg.Ids) != 2 {
				t.Fatalf("with token: %v", err)
			}
			if _, err := c.Decode(ctx, connect.NewRequest(&flurryv1.DecodeRequest{Namespace: "default", Id: "x"})); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("decode x: %v", err)
			}
		})
	}
	// An oversized body is refused.
	big := strings.NewReader(`{"namespace":"` + strings.Repeat("x", 100<<10) + `"}`)
	res, err := http.Post(base+"/flurry.v1.IDService/Next", "application/json", big)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == 200 {
		t.Errorf("a 100 KiB body was accepted")
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	yaml := "tls: {cert: " + cert + ", key: " + key + "}\nnamespaces:\n  default: {strategy: snowflake}\n"
	s, _ := newServer(t, yaml, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-done
	}()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	res, err := c.Get("https://" + ln.Addr().String() + "/v1/default/next")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.TLS == nil || res.ProtoMajor != 2 {
		t.Fatalf("%d over %s, TLS %v", res.StatusCode, res.Proto, res.TLS != nil)
	}
}

// TestAllOrNothing: a namespace that cannot start stops the whole server, and the
// namespaces built before it are closed (their lease is free again).
func TestAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	yaml := "data_dir: " + dir + "\nnamespaces:\n  a: {strategy: snowflake, snowflake: {lease: {fixed: 1, scope: s}}}\n  b: {strategy: segment, segment: {tag: missing}}\n"
	cfg, err := config.Parse("t.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = New(ctx, Options{Config: cfg, OpenSegmentStore: segmenturl.Open, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "namespace b") || !strings.Contains(err.Error(), "create") {
		t.Fatalf("got %v", err)
	}
	// The value a held is free: a second server takes it at once.
	cfg2, _ := config.Parse("t.yaml", []byte("data_dir: "+dir+"\nnamespaces:\n  a: {strategy: snowflake, snowflake: {lease: {fixed: 1, scope: s}}}\n"), nil)
	s, err := New(ctx, Options{Config: cfg2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
}

// TestRedisNamespace runs a redis namespace against the real Redis.
func TestRedisNamespace(t *testing.T) {
	testenv.NeedScheme(t, "redis")
	url := testenv.Redis.URL(t)
	key := "flurry-server-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, hs := newServer(t, "namespaces:\n  r:\n    strategy: redis\n    redis: {url: '"+url+"', key: "+key+", node: worker=5, layout: leaf}\n", nil)
	code, _, body := get(t, hs.URL+"/v1/r/next?count=2000&format=text")
	if code != 200 || strings.Count(body, "\n") != 2000 {
		t.Fatalf("%d %.200q", code, body)
	}
	first := strings.SplitN(body, "\n", 2)[0]
	code, _, body = get(t, hs.URL+"/v1/r/decode/"+first)
	if code != 200 || !strings.Contains(body, `"worker"`) || !strings.Contains(body, `"5"`) {
		t.Fatalf("%d %q", code, body)
	}
	if code, _, body := get(t, hs.URL+"/readyz"); code != 200 {
		t.Fatalf("%d %q", code, body)
	}
}

func TestTextStrategies(t *testing.T) {
	_, hs := newServer(t, "namespaces:\n  u: {strategy: uuidv7}\n  o: {strategy: objectid}\n", nil)
	for _, ns := range []string{"u", "o"} {
		code, _, body := get(t, hs.URL+"/v1/"+ns+"/next?count=3")
		var res struct{ IDs []string }
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil || len(res.IDs) != 3 || res.IDs[0] >= res.IDs[1] {
			t.Fatalf("%s: %d %q", ns, code, body)
		}
		code, _, body = get(t, hs.URL+"/v1/"+ns+"/next?count=2000&format=text")
		if code != 200 || strings.Count(body, "\n") != 2000 {
			t.Fatalf("%s text: %d", ns, code)
		}
		code, _, body = get(t, hs.URL+"/v1/"+ns+"/decode/"+res.IDs[0])
		if code != 200 || !strings.Contains(body, time.Now().UTC().Format("2006-01-02")) {
			t.Fatalf("%s decode: %d %q", ns, code, body)
		}
		if code, _, body = get(t, hs.URL+"/v1/"+ns+"/decode/123"); code != 400 {
			t.Fatalf("%s decode 123: %d %q", ns, code, body)
		}
	}
	c := flurryv1connect.NewIDServiceClient(http.DefaultClient, hs.URL)
	res, err := c.Next(context.Background(), connect.NewRequest(&flurryv1.NextRequest{Namespace: "u", Count: 5}))
	if err != nil || len(res.Msg.TextIds) != 5 || len(res.Msg.TextIds[0]) != 36 {
		t.Fatalf("%v %v", res, err)
	}
}

// TestBadTLSFiles: unreadable certificate files stop New before any namespace is
// started.
func TestBadTLSFiles(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse("t.yaml", []byte("data_dir: '"+dir+"'\ntls: {cert: '"+dir+"/no.pem', key: '"+dir+"/no.key'}\nnamespaces:\n  a: {strategy: snowflake}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "TLS certificate") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(dir + "/leases"); err == nil {
		t.Errorf("a lease directory was created: a namespace started before the TLS check")
	}
}

// TestReadyOnASkewedClock: readiness is judged on the generators' clock. A server
// whose clock runs 30 s behind the wall clock (FLURRY_CLOCK_SKEW=-30s), on a fresh
// data directory, issues IDs, so /readyz must say ready; judged on time.Now the
// grant looked 30 s out of date (found by the fault harness, kind skew-behind).
func TestReadyOnASkewedClock(t *testing.T) {
	yaml := "namespaces:\n  default:\n    strategy: snowflake\n"
	_, hs := newServer(t, yaml, clock.Offset{Parent: clock.NewSystem(), By: -30 * time.Second})
	if code, _, body := get(t, hs.URL+"/v1/default/next"); code != 200 {
		t.Fatalf("next: %d %q", code, body)
	}
	if code, _, body := get(t, hs.URL+"/readyz"); code != 200 {
		t.Fatalf("readyz on a clock 30 s behind: %d %q", code, body)
	}
}

// TestReadyWhileLogicalCoversTheGap restarts a fixed node value on a clock 20 s
// behind its mark. Under the default clock-behind policy (logical, within a
// minute) the namespace issues at once, so /readyz must say ready too: a probe
// that disagreed would take a serving instance out of rotation. Under "fail" the
// namespace refuses, and /readyz says so.
func TestReadyWhileLogicalCoversTheGap(t *testing.T) {
	for _, c := range []struct {
		behind string
		ready  bool
	}{{"", true}, {"fail", false}} {
		t.Run("behind="+c.behind, func(t *testing.T) {
			dir := t.TempDir()
			yaml := "data_dir: " + dir + "\nnamespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      lease: {fixed: 3}\n"
			if c.behind != "" {
				yaml += "      behind: " + c.behind + "\n"
			}
			s1, hs1 := newServer(t, yaml, nil)
			if code, _, body := get(t, hs1.URL+"/v1/default/next"); code != 200 {
				t.Fatalf("%d %q", code, body)
			}
			hs1.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s1.Close(ctx); err != nil {
				t.Fatal(err)
			}
			_, hs := newServer(t, yaml, clock.Offset{Parent: clock.NewSystem(), By: -20 * time.Second})
			next, _, nbody := get(t, hs.URL+"/v1/default/next")
			ready, _, rbody := get(t, hs.URL+"/readyz")
			if c.ready && (next != 200 || ready != 200) {
				t.Fatalf("logical within max_drift: next %d %q, readyz %d %q; want both 200", next, nbody, ready, rbody)
			}
			if !c.ready && (next != 503 || ready != 503 || !strings.Contains(rbody, "behind")) {
				t.Fatalf("behind: fail: next %d %q, readyz %d %q; want both 503", next, nbody, ready, rbody)
			}
		})
	}
}
