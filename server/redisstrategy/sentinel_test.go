package redisstrategy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/server/internal/strategy"
	"github.com/flurryid/flurry/verify/testenv"
)

// redisProc is a redis-server (or sentinel) the test started, logging to dir.
type redisProc struct {
	cmd  *exec.Cmd
	port int
}

// startRedisProc starts bin with args, waits until port answers on loopback,
// and kills it when the test ends.
func startRedisProc(t *testing.T, dir, name, bin string, port int, args ...string) *redisProc {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return &redisProc{cmd: cmd, port: port}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, name+".log"))
			t.Fatalf("%s on port %d did not start: %v\n%s", name, port, err, b)
		}
	}
}

// until runs op every 100 ms until it succeeds, for at most limit.
func until(t *testing.T, what string, limit time.Duration, op func(ctx context.Context) error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = op(ctx)
		cancel()
		if last == nil {
			return
		}
	}
	t.Fatalf("%s: still failing after %v: %v", what, limit, last)
}

// TestSentinelFailBackToEmptyReplica is the fault harness's Redis fail-back as
// it went wrong: the primary is killed, Sentinel promotes the replica, the old
// primary comes back without its data (no persistence) as a replica, and is
// promoted back before it has synced, so that the namespace's keys are gone
// from the primary every client now writes to. An rg namespace with node: set
// must issue again by itself, within seconds (before, it refused with
// "node value not set in Redis" until a server restarted and wrote its node
// value), and no ID may come twice across the whole run.
func TestSentinelFailBackToEmptyReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts two Redis servers and three sentinels")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testenv.Required() {
			t.Fatal("redis-server not installed (Debian package redis-server); FLURRY_TEST_REQUIRE=1 makes this a failure")
		}
		t.Skip("redis-server not installed (Debian package redis-server); the test starts its own servers")
	}
	dir := t.TempDir()
	p1, p2 := testenv.FreePort(t), testenv.FreePort(t)
	// Each server a directory of its own, so that the RDB file a full sync
	// writes is not loaded by another (nor by r1 when it restarts: it comes
	// back empty, as a host that lost its disk or a container without a volume).
	d1, d2 := filepath.Join(dir, "r1"), filepath.Join(dir, "r2")
	for _, d := range []string{d1, d2} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"}
	r1Args := append([]string{"--port", fmt.Sprint(p1), "--dir", d1}, base...)
	r1 := startRedisProc(t, dir, "r1", bin, p1, r1Args...)
	startRedisProc(t, dir, "r2", bin, p2, append([]string{"--port", fmt.Sprint(p2), "--dir", d2, "--replicaof", "127.0.0.1", fmt.Sprint(p1)}, base...)...)
	const master = "fbmaster"
	var sentinels []string
	for i := range 3 {
		p := testenv.FreePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 4000\n", p, dir, master, p1, master, master)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		startRedisProc(t, dir, fmt.Sprintf("sentinel%d", i), bin, p, conf, "--sentinel")
		sentinels = append(sentinels, fmt.Sprintf("127.0.0.1:%d", p))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	c1 := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", p1)})
	defer c1.Close()
	c2 := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", p2)})
	defer c2.Close()
	until(t, "sentinel setup", 30*time.Second, func(ctx context.Context) error {
		rs, err := sc.Replicas(ctx, master).Result()
		if err != nil {
			return err
		}
		ss, err := sc.Sentinels(ctx, master).Result()
		if err != nil {
			return err
		}
		if len(rs) != 1 || strings.Contains(fmt.Sprint(rs), "s_down") || len(ss) != 2 {
			return fmt.Errorf("replicas %v, other sentinels %d", rs, len(ss))
		}
		return nil
	})
	primary := func(ctx context.Context) (string, error) {
		a, err := sc.GetMasterAddrByName(ctx, master).Result()
		if err != nil {
			return "", err
		}
		return a[1], nil
	}

	url := "redis+sentinel://" + strings.Join(sentinels, ",") + "/" + master + "/0?dial_timeout=1s"
	ns := fmt.Sprintf("fb%d", p1)
	src, err := open(context.Background(), strategy.Namespace{Name: ns, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		Config: &config.Namespace{Strategy: "redis", Redis: &config.Redis{URL: url, Node: "worker=1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	// One goroutine issues all through the run.
	var (
		mu      sync.Mutex
		ids     []flurry.ID
		lastOK  time.Time
		lastErr error
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]flurry.ID, 50)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n, err := src.NextN(ctx, buf)
			cancel()
			mu.Lock()
			ids = append(ids, buf[:n]...)
			if err == nil {
				lastOK = time.Now()
			} else {
				lastErr = err
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	issuedSince := func(at time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		return lastOK.After(at)
	}
	waitIssue := func(what string, at time.Time, limit time.Duration) {
		t.Helper()
		for deadline := at.Add(limit); !issuedSince(at); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				mu.Lock()
				err := lastErr
				mu.Unlock()
				t.Fatalf("%s: the rg namespace issued nothing for %v; last error: %v", what, limit, err)
			}
		}
	}
	waitIssue("at the start", time.Now(), 10*time.Second)
	until(t, "r2 in sync, with the node key", 20*time.Second, func(ctx context.Context) error {
		info, err := c2.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("r2's INFO replication: %q (%v)", info, err)
		}
		if n, err := c2.Exists(ctx, "{"+ns+"}:node").Result(); err != nil || n != 1 {
			return fmt.Errorf("r2 holds no node key (%d, %v)", n, err)
		}
		return nil
	})

	// The primary dies; Sentinel promotes r2.
	r1.cmd.Process.Kill()
	r1.cmd.Wait()
	until(t, "r2 promoted", 30*time.Second, func(ctx context.Context) error {
		if p, err := primary(ctx); err != nil || p != fmt.Sprint(p2) {
			return fmt.Errorf("primary :%s (%v)", p, err)
		}
		return nil
	})
	waitIssue("after r2's promotion", time.Now(), 10*time.Second)
	// r1 comes back empty, as r2's replica, and cannot sync for a while: r2
	// sends its data only after a delay (a large dataset's transfer, here
	// made long). Failing back to r1 now promotes a primary without the keys.
	if err := c2.ConfigSet(context.Background(), "repl-diskless-sync", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c2.ConfigSet(context.Background(), "repl-diskless-sync-delay", "30").Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(d1); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(d1, 0o700); err != nil {
		t.Fatal(err)
	}
	startRedisProc(t, dir, "r1", bin, p1, append(r1Args, "--replicaof", "127.0.0.1", fmt.Sprint(p2))...)
	until(t, "r1 listed as r2's replica", 20*time.Second, func(ctx context.Context) error {
		info, err := c2.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, fmt.Sprintf("port=%d", p1)) {
			return fmt.Errorf("r2's INFO replication: %q (%v)", info, err)
		}
		return nil
	})
	if n, err := c1.DBSize(context.Background()).Result(); err != nil || n != 0 {
		t.Fatalf("r1 holds %d keys (%v); the test needs it empty", n, err)
	}
	until(t, "r1 promoted back", 40*time.Second, func(ctx context.Context) error {
		if p, err := primary(ctx); err == nil && p == fmt.Sprint(p1) {
			return nil
		}
		sc.Failover(ctx, master)
		time.Sleep(time.Second)
		return errors.New("r1 not the primary yet")
	})
	promoted := time.Now()
	t.Logf("r1 promoted back before it synced")
	waitIssue("after the fail-back to the empty r1", promoted, 15*time.Second)
	mu.Lock()
	t.Logf("issued %d IDs; last error %v", len(ids), lastErr)
	mu.Unlock()
	if n, err := c1.Exists(context.Background(), "{"+ns+"}:node").Result(); err != nil || n != 1 {
		t.Errorf("the node key on the new primary: %d (%v); want it written back", n, err)
	}

	close(stop)
	wg.Wait()
	stop = make(chan struct{})
	seen := make(map[flurry.ID]struct{}, len(ids))
	for _, id := range ids {
		if _, dup := seen[id]; dup {
			t.Fatalf("ID %d issued twice", id)
		}
		seen[id] = struct{}{}
	}
}

// TestChecks: an rg namespace on a Redis without AOF warns at start naming
// appendonly and what it risks (checks: warn, the default), does not start
// with checks: refuse, and says nothing with checks: off.
func TestChecks(t *testing.T) {
	port := testenv.FreePort(t)
	testenv.StartRedis(t, port)
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	for _, mode := range []string{"", "warn", "refuse", "off"} {
		var logs strings.Builder
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(p)
		}), nil))
		src, err := open(context.Background(), strategy.Namespace{Name: "chk" + mode, Logger: log,
			Config: &config.Namespace{Strategy: "redis", Redis: &config.Redis{URL: url, Node: "worker=1", Checks: mode}}})
		mu.Lock()
		text := logs.String()
		mu.Unlock()
		switch mode {
		case "refuse":
			if err == nil {
				src.Close()
				t.Fatal("checks: refuse started on a Redis without AOF")
			}
			if !strings.Contains(err.Error(), "appendonly is no (want yes)") {
				t.Errorf("checks: refuse: %v; want it to name appendonly", err)
			}
			continue
		case "off":
			if strings.Contains(text, "appendonly") {
				t.Errorf("checks: off logged %s", text)
			}
		default:
			if !strings.Contains(text, "setting=appendonly") || !strings.Contains(text, "issued again") {
				t.Errorf("checks: %q logged %q; want a warning naming appendonly and the duplicate it prevents", mode, text)
			}
		}
		if err != nil {
			t.Fatalf("checks: %q: %v", mode, err)
		}
		src.Close()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
