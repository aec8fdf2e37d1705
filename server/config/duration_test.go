package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/engines"
)

// redisNamespace is a redis namespace for programs that have the redis strategy:
// one without refuses the namespace when it parses the config.
// It is asked for when a test runs, not when the package initializes: the redis
// strategy registers itself after this package is initialized (it imports it).
func redisNamespace() string {
	if !engines.Has(engines.Strategy, "redis") {
		return ""
	}
	return `  r:
    strategy: redis
    redis: {url: 'redis://127.0.0.1:6379/0', behind_wait: -1ms, plain_window: 5ms}
`
}

// TestDurations: duration keys are parsed once when the file is read; a bad one is
// reported on its own line, as written, with every other problem, and the server
// reads the parsed values.
func TestDurations(t *testing.T) {
	redis := redisNamespace()
	c, err := Parse("t.yaml", []byte(`shutdown_timeout: 5s
limits: {read_timeout: 1500ms}
namespaces:
  a:
    strategy: snowflake
    snowflake: {overflow: borrow, max_drift: 50ms, lease: {ttl: 5s}}
  s:
    strategy: segment
    segment: {runway: 1m, fetch_timeout: 2s}
`+redis), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got       Duration
		def, want time.Duration
	}{
		{"shutdown_timeout", c.ShutdownTimeout, DefaultShutdown, 5 * time.Second},
		{"read_timeout", c.Limits.ReadTimeout, DefaultReadTimeout, 1500 * time.Millisecond},
		{"write_timeout (not given)", c.Limits.WriteTimeout, DefaultWriteTimeout, DefaultWriteTimeout},
		{"max_drift", c.Namespaces["a"].Snowflake.MaxDrift, 0, 50 * time.Millisecond},
		{"ttl", c.Namespaces["a"].Snowflake.Lease.TTL, 0, 5 * time.Second},
		{"window (not given)", c.Namespaces["a"].Snowflake.Lease.Window, 0, 0},
		{"runway", c.Namespaces["s"].Segment.Runway, 0, time.Minute},
		{"fetch_timeout", c.Namespaces["s"].Segment.FetchTimeout, 0, 2 * time.Second},
	} {
		if got := tc.got.Or(tc.def); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if redis != "" {
		if got := c.Namespaces["r"].Redis.BehindWait.Or(0); got != -time.Millisecond {
			t.Errorf("behind_wait: %v, want -1ms", got)
		}
		if got := c.Namespaces["r"].Redis.PlainWindow.Or(0); got != 5*time.Millisecond {
			t.Errorf("plain_window: %v, want 5ms", got)
		}
	}
	if !c.ShutdownTimeout.IsSet() || c.Limits.WriteTimeout.IsSet() || c.ShutdownTimeout.String() != "5s" {
		t.Errorf("IsSet/String: %v %v %q", c.ShutdownTimeout.IsSet(), c.Limits.WriteTimeout.IsSet(), c.ShutdownTimeout)
	}

	_, err = Parse("t.yaml", []byte(`shutdown_timeout: soon
limits:
  write_timeout: [1s]
namespaces:
  a:
    strategy: snowflake
    snowflake:
      wait_threshold: -5ms
      lease: {ttl: "0.5s"}
`), nil)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	want := []string{
		`t.yaml:1: shutdown_timeout: "soon" is not a duration such as 500ms, 10s or 1m`,
		`t.yaml:3: limits.write_timeout: a list is not text (quote it)`,
		`t.yaml:8: namespaces.a.snowflake.wait_threshold: "-5ms" is negative`,
		`t.yaml:9: namespaces.a.snowflake.lease.ttl: "0.5s": `,
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(ce.Problems), len(want), err)
	}
	for i, w := range want {
		if got := ce.Problems[i].String(); !strings.HasPrefix(got, w) {
			t.Errorf("problem %d: %q\nwant prefix %q", i, got, w)
		}
	}

	code := Default()
	code.ShutdownTimeout = DurationOf(2 * time.Second)
	if err := code.Check(nil); err != nil || code.ShutdownTimeout.Or(DefaultShutdown) != 2*time.Second {
		t.Errorf("DurationOf: %v %v", code.ShutdownTimeout, err)
	}
}

// TestPlainWindowBound: plain_window beyond redisgen's bound (10ms, or the
// layout's unit if longer: the plain path assumes a failover to a lagging replica
// takes longer than the window) is refused with its line and the assumption; a
// negative one (the plain path off) and one at the bound are not.
func TestPlainWindowBound(t *testing.T) {
	if !engines.Has(engines.Strategy, "redis") {
		t.Skip("this test binary has no redis strategy: go test -tags flurry_redis (or flurry_full) adds it")
	}
	for _, tc := range []struct {
		window, layout, want string
	}{
		{"-1ms", "", ""},
		{"10ms", "", ""},
		{"11ms", "", `t.yaml:5: namespaces.r.redis.plain_window: "11ms" is longer than 10ms`},
		{"500ms", "", `"500ms" is longer than 10ms: the plain path assumes that a failover to a lagging replica takes longer than the window`},
		{"1s", "", `"1s" is longer than 10ms`},
		{"soon", "", `t.yaml:5: namespaces.r.redis.plain_window: "soon" is not a duration`},
		{"10ms", "sonyflake", ""},
		{"100ms", "jssafe", ""},
		{"101ms", "jssafe", `"101ms" is longer than 100ms`},
	} {
		_, err := Parse("t.yaml", []byte(`namespaces:
  r:
    strategy: redis
    redis:
      plain_window: `+tc.window+`
      url: redis://127.0.0.1:6379/0
      layout: '`+tc.layout+`'
`), nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.window, tc.layout, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: %v, want %q", tc.window, tc.layout, err, tc.want)
		}
	}
}

// TestRedisChecksKey: checks takes warn, refuse or off, and names them when given
// something else.
func TestRedisChecksKey(t *testing.T) {
	if !engines.Has(engines.Strategy, "redis") {
		t.Skip("this test binary has no redis strategy: go test -tags flurry_redis (or flurry_full) adds it")
	}
	for _, tc := range []struct{ checks, want string }{
		{"warn", ""}, {"refuse", ""}, {"off", ""},
		{"strict", `t.yaml:5: namespaces.r.redis.checks: "strict": give warn`},
	} {
		_, err := Parse("t.yaml", []byte(`namespaces:
  r:
    strategy: redis
    redis:
      checks: `+tc.checks+`
      url: redis://127.0.0.1:6379/0
`), nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.checks, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.checks, err, tc.want)
		}
	}
}
