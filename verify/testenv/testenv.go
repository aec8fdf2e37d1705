// Package testenv finds the real services integration tests talk to.
//
// Each service's address comes from an environment variable, with the address this
// project's machines use as the default. When the service does not answer, the test
// is skipped with a message naming it, unless FLURRY_TEST_REQUIRE=1 (as in CI), in
// which case it fails.
package testenv

import (
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// A Service is an external engine integration tests need.
type Service struct {
	Name    string // for messages: "PostgreSQL"
	Env     string // variable holding the URL
	Default string // URL used when Env is unset
}

// The services of this project's machines.
var (
	Postgres = Service{"PostgreSQL", "FLURRY_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}
	MySQL    = Service{"MariaDB/MySQL", "FLURRY_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"}
	Redis    = Service{"Redis", "FLURRY_TEST_REDIS", "redis://127.0.0.1:6379/0"}
	Etcd     = Service{"etcd", "FLURRY_TEST_ETCD", "etcd://127.0.0.1:2379"}
	// ZooKeeper's variable may also name the servers alone, as ZooKeeper's own
	// tools do: FLURRY_TEST_ZK=127.0.0.1:2181.
	ZooKeeper = Service{"ZooKeeper", "FLURRY_TEST_ZK", "zk://127.0.0.1:2181"}
)

// Required reports whether FLURRY_TEST_REQUIRE=1 turns skips into failures.
func Required() bool { return os.Getenv("FLURRY_TEST_REQUIRE") == "1" }

// URL returns the service's URL after checking that its host answers on TCP; see
// the package documentation for what happens when it does not.
func (s Service) URL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(s.Env)
	if raw == "" {
		raw = s.Default
	}
	if scheme, _, ok := strings.Cut(s.Default, "://"); ok && !strings.Contains(raw, "://") {
		raw = scheme + "://" + raw // a bare host list
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s=%q is not a URL: %v", s.Env, raw, err)
	}
	var lastErr error
	for _, host := range strings.Split(u.Host, ",") {
		c, err := net.DialTimeout("tcp", host, 2*time.Second)
		if err == nil {
			c.Close()
			return raw
		}
		lastErr = err
	}
	msg := s.Name + " unreachable at " + u.Host + " (" + lastErr.Error() + "); start it or set " + s.Env
	if Required() {
		t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
	}
	t.Skip(msg)
	return ""
}
