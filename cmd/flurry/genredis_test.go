//go:build flurry_full || flurry_redis

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// redisNamespace returns the test Redis's URL and a fresh namespace whose keys are
// deleted when the test ends.
func redisNamespace(t *testing.T) (string, string) {
	t.Helper()
	u := testenv.Redis.URL(t)
	b := make([]byte, 8)
	rand.Read(b)
	ns := "flurry-test-cli-" + hex.EncodeToString(b)
	t.Cleanup(func() {
		o, err := redis.ParseURL(u)
		if err != nil {
			return
		}
		c := redis.NewClient(o)
		defer c.Close()
		c.Del(context.Background(), "{"+ns+"}:node", "{"+ns+"}:last")
	})
	return u, ns
}

func TestGenRedis(t *testing.T) {
	u, ns := redisNamespace(t)

	r := cli(t, "", "gen", "--redis", u, "--namespace", ns, "-n", "5")
	wantOneLineError(t, r, 1, "node value not set", "flurry redis set-node")

	r = cli(t, "", "redis", "set-node", u, "--namespace", ns, "datacenter=3,worker=30")
	if want := "set {" + ns + "}:node: node datacenter=3,worker=30 (layout twitter) on "; r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, want) || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("set-node: %+v, want one line starting %q", r, want)
	}
	if r := cli(t, "", "redis", "get-node", u, "--namespace", ns); r.code != 0 || r.stdout != "datacenter=3,worker=30\n" {
		t.Fatalf("get-node: %+v", r)
	}

	const n = 20000
	r = cli(t, "", "gen", "--redis", u, "--namespace", ns, "--layout", "twitter", "-n", "20000")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("gen --redis: %+v", r)
	}
	l, _ := layout.Lookup("twitter")
	ids := lines(r.stdout)
	if len(ids) != n {
		t.Fatalf("%d IDs, want %d", len(ids), n)
	}
	var prev flurry.ID
	for _, s := range ids {
		id, err := flurry.ParseID(s)
		if err != nil {
			t.Fatal(err)
		}
		if id <= prev {
			t.Fatalf("ID %d after %d", id, prev)
		}
		prev = id
		if p, err := l.Decompose(id); err != nil || p.Nodes != (layout.NodeValues{3, 30}) {
			t.Fatalf("ID %d decodes to %+v, %v", id, p, err)
		}
	}

	// A layout of another shape on the namespace is refused.
	if r := cli(t, "", "redis", "set-node", u, "--namespace", ns, "--layout", "sonyflake", "42"); r.code != 0 {
		t.Fatalf("set-node sonyflake: %+v", r)
	}
	r = cli(t, "", "gen", "--redis", u, "--namespace", ns, "--layout", "sonyflake", "-n", "1")
	wantOneLineError(t, r, 1, "another layout", "new namespace")
}

// TestRedisGetNodeLayout: get-node without --layout reads the layout set-node
// recorded; with --layout it checks against that one; a value with no recorded
// layout is printed field by field with a note.
func TestRedisGetNodeLayout(t *testing.T) {
	u, ns := redisNamespace(t)
	r := cli(t, "", "redis", "get-node", u, "--namespace", ns)
	wantOneLineError(t, r, 1, "has no node value", "flurry redis set-node")

	if r := cli(t, "", "redis", "set-node", u, "--namespace", ns, "--layout", "sonyflake", "42"); r.code != 0 || !strings.Contains(r.stdout, "node machine=42 (layout sonyflake)") {
		t.Fatalf("set-node: %+v", r)
	}
	if r := cli(t, "", "redis", "get-node", u, "--namespace", ns); r.code != 0 || r.stdout != "machine=42\n" || r.stderr != "" {
		t.Errorf("get-node without --layout: %+v, want machine=42", r)
	}
	if r := cli(t, "", "redis", "get-node", u, "--namespace", ns, "--layout", "sonyflake"); r.code != 0 || r.stdout != "machine=42\n" {
		t.Errorf("get-node --layout sonyflake: %+v", r)
	}
	r = cli(t, "", "redis", "get-node", u, "--namespace", ns, "--layout", "twitter")
	wantOneLineError(t, r, 1, "datacenter")

	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	defer c.Close()
	if err := c.HDel(context.Background(), "{"+ns+"}:node", "@layout").Err(); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "", "redis", "get-node", u, "--namespace", ns)
	if r.code != 0 || r.stdout != "machine=42\n" || !strings.Contains(r.stderr, "no layout is recorded") {
		t.Errorf("get-node of a value with no layout: %+v", r)
	}
}

func TestGenRedisUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "--namespace", "x"}, "--namespace applies only with --redis"},
		{[]string{"gen", "--redis", "redis://127.0.0.1:1/0", "--node", "worker=1"}, "--node does not apply with --redis"},
		{[]string{"gen", "--redis", "redis://127.0.0.1:1/0", "--lease", "file:///tmp/x"}, "--lease does not apply with --redis"},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0", "5"}, "give them as name=value"},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0", "datacenter=1"}, "node field worker is not given"},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0", "datacenter=32,worker=1"}, "datacenter 32 does not fit in 5 bits"},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0", "--layout", "sonyflake", "x"}, `"x" is not a whole number`},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0", "--layout", "mastodon", "1"}, "no node field"},
		{[]string{"redis", "set-node", "redis://127.0.0.1:1/0"}, "takes the Redis URL and the node value"},
		{[]string{"redis", "get-node"}, "takes the Redis URL"},
		{[]string{"redis", "bogus"}, `unknown command "bogus"`},
	} {
		r := cli(t, "", tc.args...)
		wantOneLineError(t, r, 2, tc.want)
	}
	r := cli(t, "", "redis", "get-node", "redis://u:sekrit@127.0.0.1:1/0?dial_timeout=100ms&max_retries=-1")
	wantOneLineError(t, r, 1, "no answer within 100ms (is Redis running there?)")
	if strings.Contains(r.stderr, "sekrit") {
		t.Errorf("error %q shows the password", r.stderr)
	}
}

// FuzzParseNodeArg: set-node's value is accepted or refused, never with a panic;
// what is accepted fits the layout and reads back the same from its text form.
func FuzzParseNodeArg(f *testing.F) {
	for _, s := range []string{"datacenter=1,worker=3", "5", "worker=3", " datacenter = 31 , worker=0", "datacenter=1,worker=3,worker=4", "=", ",", "datacenter=-1,worker=1"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	twitter, _ := layout.Lookup("twitter")
	sonyflake, _ := layout.Lookup("sonyflake")
	f.Fuzz(func(t *testing.T, s string, single bool) {
		l := twitter
		if single {
			l = sonyflake
		}
		nv, err := parseNodeArg(l, s)
		if err != nil {
			return
		}
		if err := l.CheckNodeValues(nv); err != nil {
			t.Fatalf("accepted %q as %v, which does not fit: %v", s, nv, err)
		}
		back, err := parseNodeArg(l, l.FormatNodeValues(nv))
		if err != nil || back != nv {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, nv, l.FormatNodeValues(nv), back, err)
		}
	})
}

// TestGenRedisClockSkew: gen --redis announces FLURRY_CLOCK_SKEW as every other
// gen does, and says that the shift does not move its IDs: they take the Redis
// server's clock.
func TestGenRedisClockSkew(t *testing.T) {
	u, ns := redisNamespace(t)
	if r := cli(t, "", "redis", "set-node", u, "--namespace", ns, "datacenter=1,worker=2"); r.code != 0 {
		t.Fatalf("set-node: %+v", r)
	}
	t.Setenv(skewEnv, "1h")
	r := cli(t, "", "gen", "--redis", u, "--namespace", ns, "-n", "3")
	want := "flurry: WARNING: FLURRY_CLOCK_SKEW=1h: this process's clock is shifted by 1h0m0s FOR TESTING; never set it in production\n" +
		"flurry: gen --redis: the IDs take the Redis server's clock, which the shift does not move\n"
	if r.code != 0 || r.stderr != want {
		t.Fatalf("skewed gen --redis: %+v\nwant stderr %q", r, want)
	}
	l, _ := layout.Lookup("twitter")
	if at := l.TimeOf(parseIDs(t, r.stdout, 3)[0]); at.After(time.Now().Add(time.Minute)) {
		t.Errorf("ID time %s follows the shifted clock, not Redis's", at)
	}
	t.Setenv(skewEnv, "soon")
	wantOneLineError(t, cli(t, "", "gen", "--redis", u, "--namespace", ns), 1, `FLURRY_CLOCK_SKEW="soon" is not a duration`)
}

// TestServeCheckPlainWindow: serve --check refuses a redis namespace's
// plain_window longer than the window a failover to a lagging replica can be
// assumed to take longer than (10ms, or the layout's unit), saying so, and
// accepts one within it.
func TestServeCheckPlainWindow(t *testing.T) {
	for _, tc := range []struct {
		window string
		code   int
		want   string
	}{
		{"10ms", 0, "ok"},
		{"-1ms", 0, "ok"},
		{"500ms", 1, `plain_window: "500ms" is longer than 10ms: the plain path assumes that a failover to a lagging replica takes longer than the window`},
		{"1s", 1, `plain_window: "1s" is longer than 10ms`},
	} {
		cfg := filepath.Join(t.TempDir(), "flurry.yaml")
		yaml := "namespaces:\n  r:\n    strategy: redis\n    redis: {url: 'redis://127.0.0.1:6379/0', plain_window: " + tc.window + "}\n"
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cli(t, "", "serve", "--config", cfg, "--check")
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
			t.Errorf("serve --check with plain_window %s: %+v; want status %d and %q", tc.window, r, tc.code, tc.want)
		}
	}
}

// TestServeCheckRedisSettings: serve --check reads the settings of each redis
// namespace's server: a Redis without AOF is named with what it risks (status 0
// with the default checks: warn; 1 with checks: refuse), checks: off does not
// look.
func TestServeCheckRedisSettings(t *testing.T) {
	port := testenv.FreePort(t)
	testenv.StartRedis(t, port)
	for _, tc := range []struct {
		checks string
		code   int
		want   string
	}{
		{"", 0, "namespace r: warning: Redis appendonly is no (want yes)"},
		{"refuse", 1, "would not start: checks: refuse"},
		{"off", 0, "ok"},
	} {
		cfg := filepath.Join(t.TempDir(), "flurry.yaml")
		yaml := fmt.Sprintf("namespaces:\n  r:\n    strategy: redis\n    redis: {url: 'redis://127.0.0.1:%d/0', checks: '%s'}\n", port, tc.checks)
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cli(t, "", "serve", "--config", cfg, "--check")
		out := r.stdout + r.stderr
		if r.code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("serve --check with checks %q: %+v; want status %d and %q", tc.checks, r, tc.code, tc.want)
		}
		if tc.checks == "off" && strings.Contains(out, "appendonly") {
			t.Errorf("serve --check with checks off looked: %s", out)
		}
	}
}
