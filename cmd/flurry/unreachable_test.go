package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestUnreachableStores runs the flurry binary against stores that do not answer:
// a port where a listener accepts connections and never replies (a stopped
// server, a dropped route) and a port where nothing listens. Every command must
// end by itself, non-zero, with one line on stderr that names the store, and no
// line from go-redis's logger. The failure modes it guards against: etcd's client
// dials lazily and waits for a connection forever, so an unbounded etcd command
// never ends, and go-redis prints its own "pool.go:770: ... failed to dial" lines
// before flurry's.
func TestUnreachableStores(t *testing.T) {
	testenv.NeedFull(t)
	bin := testenv.BuildFlurry(t)
	bctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests, unlike a defer
	dir := t.TempDir()
	hole := testenv.StartBlackhole(t)
	closed := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	serveConfig := func(name, store string) string {
		p := filepath.Join(dir, name+".yaml")
		cfg := "namespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      layout: twitter\n      lease:\n        store: " + store + "\n"
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Port 0: serve binds before it opens any store, and the serve cases run in
	// parallel, so one fixed port would make the second fail on the bind instead.
	listen := "127.0.0.1:0"

	for _, tc := range []struct {
		name string
		args []string
		want string // part of the one line
	}{
		// The documented defaults: 5s.
		{"etcd lease list", []string{"lease", "list", "--scope", "x", "etcd://" + closed + "/x"},
			"flurry: lease/etcdstore: etcd store etcd://" + closed + "/x: no answer within 5s (is etcd running there?)"},
		{"etcd segment list, hanging", []string{"segment", "list", "etcd://" + hole + "/x"},
			"segment/etcdstore: etcd store etcd://" + hole + "/x: no answer within 5s (is etcd running there?)"},
		// The URL options. Open names a Redis or etcd store by its Options (the
		// address, database or prefix, never a password), not by the URL.
		{"etcd gen", []string{"gen", "-n", "1", "--lease", "etcd://" + hole + "/x?dial_timeout=1s"},
			"lease/etcdstore: etcd store etcd://" + hole + "/x: no answer within 1s (is etcd running there?)"},
		{"etcd serve", []string{"serve", "--listen", listen, "--config", serveConfig("etcd", "etcd://"+hole+"/x?dial_timeout=1s")},
			"etcd store etcd://" + hole + "/x: no answer within 1s (is etcd running there?)"},
		{"redis lease list, refused", []string{"lease", "list", "--scope", "x", "redis://:hunter2pw@" + closed + "/0"},
			"lease/redisstore: redis store redis://" + closed + "/0: dial tcp " + closed + ": connect: connection refused"},
		{"redis serve, refused", []string{"serve", "--listen", listen, "--config", serveConfig("redis", "redis://"+closed+"/0")},
			"redis store redis://" + closed + "/0: dial tcp " + closed + ": connect: connection refused"},
		{"redis segment list, hanging", []string{"segment", "list", "redis://" + hole + "/0?dial_timeout=1s"},
			"segment/redisstore: redis store redis://" + hole + "/0: no answer within 1s (is Redis running there?)"},
		{"postgres lease list, hanging", []string{"lease", "list", "--scope", "x", "postgres://u:hunter2pw@" + hole + "/db?request_timeout=1s"},
			"lease/sqlstore: postgres store postgres://u:xxxxx@" + hole + "/db?request_timeout=1s: no answer within 1s (is PostgreSQL running there?)"},
		{"mysql segment list, hanging", []string{"segment", "list", "mysql://root@" + hole + "/test?request_timeout=1s"},
			"segment/sqlstore: mysql store mysql://root@" + hole + "/test?request_timeout=1s: no answer within 1s (is MySQL or MariaDB running there?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A bound on the whole command, far above the store's timeout: the old
			// code never ended.
			ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("flurry %s did not end by itself; stderr so far: %q", strings.Join(tc.args, " "), stderr.String())
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("exit: %v; want status 1", err)
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "flurry: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("stderr %q; want one line with %q", msg, tc.want)
			}
			if strings.Contains(msg, "pool.go") || strings.Contains(msg, "hunter2pw") {
				t.Errorf("stderr %q shows go-redis's log or a password", msg)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}
