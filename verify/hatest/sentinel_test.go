//go:build flurry_full || flurry_redis

package hatest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/redisgen"
)

// TestSentinelFailover starts a Redis primary, a replica and three sentinels on
// loopback ports and runs the lease store, the segment store and redisgen on
// redis+sentinel://s0,s1,s2/master while SENTINEL FAILOVER promotes the replica
// halfway. The stores write with wait_replicas=1, so every write they
// acknowledged had reached the replica that is promoted.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Redis with Sentinel; run: go test -tags flurry_full ./verify/hatest/")
	}
	bin := need(t, "redis-server", "redis-server")
	dir := t.TempDir()
	ports := freePorts(t, 5)
	primary, replica, sentinels := ports[0], ports[1], ports[2:]
	base := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"}
	proc(t, dir, "primary", bin, append([]string{"--port", fmt.Sprint(primary), "--dir", dir}, base...)...)
	proc(t, dir, "replica", bin, append([]string{"--port", fmt.Sprint(replica), "--dir", dir,
		"--replicaof", "127.0.0.1", fmt.Sprint(primary)}, base...)...)
	const master = "fcmaster"
	var addrs []string
	for i, p := range sentinels {
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 10000\n", p, dir, master, primary, master, master)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		proc(t, dir, fmt.Sprintf("sentinel%d", i), bin, conf, "--sentinel")
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: addrs[0]})
	defer sc.Close()
	// Wait until the replica is in sync and the sentinel knows it and its peers.
	ready := eventually(t, "sentinel setup", func(ctx context.Context) error {
		rs, err := sc.Replicas(ctx, master).Result()
		if err != nil {
			return err
		}
		ss, err := sc.Sentinels(ctx, master).Result()
		if err != nil {
			return err
		}
		if len(rs) != 1 || !strings.Contains(fmt.Sprint(rs), "flags:slave") || strings.Contains(fmt.Sprint(rs), "s_down") || len(ss) != 2 {
			return fmt.Errorf("replicas %v, other sentinels %d", rs, len(ss))
		}
		return nil
	})
	t.Logf("sentinels ready after %d polls", ready)

	url := "redis+sentinel://" + strings.Join(addrs, ",") + "/" + master + "/0"
	l, err := layout.Parse("twitter")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := redisgen.New(ctx, redisgen.Options{URL: url + "?dial_timeout=2s", Layout: l, Namespace: "fc-ha-" + filepath.Base(dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}
	var last flurry.ID
	ids := 0
	next := func() {
		eventually(t, "redisgen", func(ctx context.Context) error {
			id, err := g.Next(ctx)
			if err == nil {
				if id <= last {
					t.Fatalf("redisgen issued %d after %d", id, last)
				}
				last = id
				ids++
			}
			return err
		})
	}
	next()
	exercise(t, url+"?wait_replicas=1", url+"?wait_replicas=1", func() {
		eventually(t, "SENTINEL FAILOVER", func(ctx context.Context) error { return sc.Failover(ctx, master).Err() })
		eventually(t, "the replica promoted", func(ctx context.Context) error {
			a, err := sc.GetMasterAddrByName(ctx, master).Result()
			if err != nil {
				return err
			}
			if a[1] != fmt.Sprint(replica) {
				return fmt.Errorf("primary still %v", a)
			}
			return nil
		})
		t.Logf("failed over from :%d to :%d", primary, replica)
		next()
	})
	next()
	// The old primary serves as a replica now; the generator writes to the new one.
	role, err := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", replica)}).Do(ctx, "ROLE").Slice()
	if err != nil || role[0] != "master" {
		t.Errorf("ROLE of the promoted replica: %v, %v", role, err)
	}
	t.Logf("redisgen issued %d increasing IDs across the failover", ids)
}
