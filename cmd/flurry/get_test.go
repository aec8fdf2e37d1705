package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/server"
	"github.com/flurryid/flurry/server/config"
)

// startFlurryServer runs the real server in process with the namespaces "default"
// (snowflake, file lease under a temporary directory), "locked" (snowflake with a
// token) and, when this build has the strategy, "uuid" (uuidv7; hasText reports
// it). It speaks HTTP/1.1 and h2c.
func startFlurryServer(t testing.TB) *httptest.Server {
	ts, _ := startFlurryServerText(t)
	return ts
}

// startFlurryServerText starts the test server; wrap, if given, wraps its handler
// (to watch the requests).
func startFlurryServerText(t testing.TB, wrap ...func(http.Handler) http.Handler) (ts *httptest.Server, hasText bool) {
	t.Helper()
	ctx := context.Background()
	srv, err := server.New(ctx, server.Options{Config: testServeConfig(t, true), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	hasText = err == nil
	if err != nil && strings.Contains(err.Error(), "not built") {
		srv, err = server.New(ctx, server.Options{Config: testServeConfig(t, false), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for _, w := range wrap {
		h = w(h)
	}
	ts = httptest.NewUnstartedServer(h)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = &p
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		srv.Close(ctx)
	})
	return ts, hasText
}

func testServeConfig(t testing.TB, text bool) *config.Config {
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Namespaces: map[string]*config.Namespace{
			"default": {Strategy: "snowflake", Snowflake: &config.Snowflake{}},
			"uuid":    {Strategy: "uuidv7", UUIDv7: &struct{}{}},
			"locked":  {Strategy: "snowflake", Snowflake: &config.Snowflake{}, Tokens: []string{"s3cret-0123456789abcdef"}},
		},
		Order: []string{"default", "uuid", "locked"},
	}
	if !text {
		delete(cfg.Namespaces, "uuid")
		cfg.Order = []string{"default", "locked"}
	}
	if err := cfg.Check(nil); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestGet(t *testing.T) {
	ts := startFlurryServer(t)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"http", []string{"-n", "10"}, 10},
		{"grpc", []string{"-n", "10", "--grpc"}, 10},
		{"several requests", []string{"-n", "2500", "--batch", "1000"}, 2500},
		{"default count", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, "", append([]string{"get", "--server", ts.URL}, tc.args...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			ids := parseIDs(t, r.stdout, tc.want)
			for i := 1; i < len(ids); i++ {
				if ids[i] <= ids[i-1] {
					t.Fatalf("ID %d after %d from one server", ids[i], ids[i-1])
				}
			}
		})
	}
}

func TestGetJSONAndText(t *testing.T) {
	ts, hasText := startFlurryServerText(t)
	r := cli(t, "", "get", "--server", ts.URL, "-n", "3", "--json")
	var out struct {
		Namespace string      `json:"namespace"`
		IDs       []flurry.ID `json:"ids"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("--json: %q, exit %d, %v", r.stdout, r.code, err)
	}
	if out.Namespace != "default" || len(out.IDs) != 3 {
		t.Errorf("--json: %+v", out)
	}
	if !strings.Contains(r.stdout, `"ids":["`) {
		t.Errorf("--json: IDs are not strings: %s", r.stdout)
	}
	if !hasText {
		t.Skip("this build's server has no uuidv7 strategy yet")
	}
	r = cli(t, "", "get", "--server", ts.URL, "--namespace", "uuid", "-n", "2")
	if l := lines(r.stdout); r.code != 0 || len(l) != 2 || len(l[0]) != 36 {
		t.Errorf("uuid namespace: %q, exit %d, stderr %q", r.stdout, r.code, r.stderr)
	}
	r = cli(t, "", "get", "--server", ts.URL, "--namespace", "uuid", "-n", "2", "--json")
	var texts struct{ IDs []string }
	if err := json.Unmarshal([]byte(r.stdout), &texts); err != nil || len(texts.IDs) != 2 {
		t.Errorf("uuid --json: %q %v", r.stdout, err)
	}
}

func TestGetToken(t *testing.T) {
	ts := startFlurryServer(t)
	r := cli(t, "", "get", "--server", ts.URL, "--namespace", "locked")
	wantOneLineError(t, r, 1, "token", "locked")
	r = cli(t, "", "get", "--server", ts.URL, "--namespace", "locked", "--token", "s3cret-0123456789abcdef")
	if r.code != 0 || len(lines(r.stdout)) != 1 {
		t.Errorf("with the token: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Setenv("FLURRY_TOKEN", "s3cret-0123456789abcdef")
	r = cli(t, "", "get", "--server", ts.URL, "--namespace", "locked", "--grpc")
	if r.code != 0 || len(lines(r.stdout)) != 1 {
		t.Errorf("with $FLURRY_TOKEN: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestGetErrors(t *testing.T) {
	ts := startFlurryServer(t)
	dead := "http://" + deadAddr(t)
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"unknown namespace", []string{"--server", ts.URL, "--namespace", "nope"}, 1, []string{"unknown namespace", "nope"}},
		{"every server down", []string{"--server", dead}, 1, []string{"no server could issue", "connection refused"}},
		{"batch above max_count", []string{"--server", ts.URL, "-n", "200000", "--batch", "200000"}, 1, []string{"refused as invalid", "max"}},
		{"bad server", []string{"--server", "ftp://x"}, 2, []string{"--server", "scheme"}},
		{"empty server", []string{"--server", ","}, 2, []string{"--server"}},
		{"zero count", []string{"--server", ts.URL, "-n", "0"}, 2, []string{"-n"}},
		{"bad timeout", []string{"--server", ts.URL, "--timeout", "0s"}, 2, []string{"--timeout"}},
		{"argument", []string{"--server", ts.URL, "extra"}, 2, []string{"no arguments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOneLineError(t, cli(t, "", append([]string{"get"}, tc.args...)...), tc.code, tc.wants...)
		})
	}
	t.Run("failover", func(t *testing.T) {
		r := cli(t, "", "get", "--server", dead+","+ts.URL, "-n", "5")
		if r.code != 0 || len(lines(r.stdout)) != 5 {
			t.Errorf("exit %d, %q %q", r.code, r.stdout, r.stderr)
		}
	})
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t testing.TB) string {
	ts := httptest.NewServer(http.NotFoundHandler())
	addr := ts.Listener.Addr().String()
	ts.Close()
	return addr
}
