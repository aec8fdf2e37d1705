package sqlconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// refusedPort is a loopback port nothing listens on.
func refusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestUnreachableOnce: opening a store whose database refuses connections says
// so once, naming the engine and the address, where pgx's own message repeats
// the dial error of each attempt.
func TestUnreachableOnce(t *testing.T) {
	port := refusedPort(t)
	for _, tc := range []struct{ url, engine string }{
		{fmt.Sprintf("postgres://nope@127.0.0.1:%d/x", port), "PostgreSQL"},
		{fmt.Sprintf("mysql://nope@127.0.0.1:%d/x", port), "MySQL"},
	} {
		c, err := Parse(tc.url, ParseOptions{Prefix: "lease/sqlstore"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = OpenHandle(ctx, Conn{Prefix: "lease/sqlstore", Engine: c.Engine, Connector: c.Connector, Name: c.Redacted, DefaultTable: "t", SkipCreate: true})
		cancel()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		want := "lease/sqlstore: cannot reach " + tc.engine + " at " + addr + " (connection refused); check that it runs and the URL's host and port"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.url, err, want)
		}
		if _, ok := errors.AsType[*UnreachableError](err); !ok {
			t.Errorf("%s: not an UnreachableError: %v", tc.url, err)
		}
		if ua, ok := Unreachable(err); !ok || ua != addr {
			t.Errorf("%s: Unreachable = %q, %v", tc.url, ua, ok)
		}
		if Denied(err) || NoTable(err) || strings.Count(err.Error(), addr) != 1 {
			t.Errorf("%s: classified wrong: %v", tc.url, err)
		}
	}
}
