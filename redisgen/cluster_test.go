package redisgen

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// startServer starts a throwaway redis-server on a loopback port with the extra
// arguments, waits until it answers and returns its address. It skips when
// redis-server is not on PATH (fails with FLURRY_TEST_REQUIRE=1). The server is
// stopped when the test ends.
func startServer(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server not installed (" + err.Error() + "); this test starts its own Redis servers"
		if testenv.Required() {
			t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
		}
		t.Skip(msg)
	}
	port := testenv.FreePort(t)
	args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(dir, name+".log")}, args...)
	cmd := exec.Command(server, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx := testCtx(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for c.Ping(ctx).Err() != nil {
		if ctx.Err() != nil {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr
}

// startCluster starts a throwaway Redis Cluster of three masters on loopback ports
// and returns their addresses. It skips when redis-server or redis-cli is not on
// PATH (fails with FLURRY_TEST_REQUIRE=1). The servers are stopped when the test
// ends.
func startCluster(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		msg := "redis-cli not installed (" + err.Error() + "); the Redis Cluster test needs it"
		if testenv.Required() {
			t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	var addrs []string
	for i := range 3 {
		bus := testenv.FreePort(t)
		addrs = append(addrs, startServer(t, dir, fmt.Sprintf("redis-%d", i),
			"--cluster-port", strconv.Itoa(bus), "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", i))))
	}
	ctx := testCtx(t)
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range addrs { // wait until every node sees the whole cluster
		c := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("cluster node %s never reached cluster_state:ok: %v %s", a, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return addrs
}

// TestCluster runs generators on a real three-master Redis Cluster: each
// namespace's keys hash to one slot, the script runs wherever that slot lives, and
// several namespaces with their own node values spread over the shards without a
// duplicate.
func TestCluster(t *testing.T) {
	addrs := startCluster(t)
	ctx := testCtx(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	l := mustLayout(t, "twitter")

	const namespaces, perNS = 6, 5000
	var (
		mu      sync.Mutex
		all     = map[flurry.ID]string{}
		wg      sync.WaitGroup
		errs    = make(chan error, namespaces)
		masters = map[string]bool{}
	)
	for i := range namespaces {
		ns := fmt.Sprintf("orders-%d", i)
		slotNode, err := c.ClusterKeySlot(ctx, nodeKey(ns)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slotLast, err := c.ClusterKeySlot(ctx, lastKey(ns)).Result()
		if err != nil || slotNode != slotLast {
			t.Fatalf("namespace %s: keys in slots %d and %d (%v)", ns, slotNode, slotLast, err)
		}
		m, err := c.MasterForKey(ctx, nodeKey(ns))
		if err != nil {
			t.Fatal(err)
		}
		masters[m.Options().Addr] = true

		g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
		if err := g.SetNode(ctx, layout.NodeValues{1, int64(i)}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			buf := make([]flurry.ID, 64)
			for done := 0; done < perNS; {
				k, err := g.NextN(ctx, buf[:min(len(buf), perNS-done)])
				if err != nil {
					errs <- fmt.Errorf("namespace %s: %w", ns, err)
					return
				}
				mu.Lock()
				for _, id := range buf[:k] {
					if other, dup := all[id]; dup {
						mu.Unlock()
						errs <- fmt.Errorf("ID %d issued in %s and %s", id, other, ns)
						return
					}
					all[id] = ns
				}
				mu.Unlock()
				done += k
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(all) != namespaces*perNS {
		t.Fatalf("%d IDs, want %d", len(all), namespaces*perNS)
	}
	t.Logf("%d namespaces on %d of %d masters", namespaces, len(masters), len(addrs))

	// Next's script (sent as a raw EVALSHA, EVAL after NOSCRIPT) runs on the shard
	// that holds the namespace, and is loaded there.
	probe := newGen(t, Options{Client: c, Namespace: "probe", Layout: l})
	if err := probe.SetNode(ctx, layout.NodeValues{2, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := probe.Next(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := c.MasterForKey(ctx, nodeKey("probe"))
	if err != nil {
		t.Fatal(err)
	}
	ok, err := m.ScriptExists(ctx, probe.cur.Load().one.Hash()).Result()
	if err != nil || !ok[0] {
		err = fmt.Errorf("Next's script not loaded on %s, the namespace's master (%v)", m.Options().Addr, err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
