package redisgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// settings returns the Setting of each finding, sorted.
func settings(fs []Finding) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Setting)
	}
	slices.Sort(s)
	return s
}

// TestCheckRedis starts its own servers with the settings docs/redisgen.md asks
// for (a primary with appendonly and min-replicas-to-write 1, two replicas),
// then takes each away, and a lone server with CONFIG renamed: CheckRedis names
// exactly the settings that are missing, each with the duplicate it prevents,
// and says when it could not look.
func TestCheckRedis(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	l := mustLayout(t, "twitter")
	primary := startServer(t, dir, "primary", "--appendonly", "yes", "--appendfilename", "p.aof",
		"--min-replicas-to-write", "1", "--min-replicas-max-lag", "5")
	host, port, _ := strings.Cut(primary, ":")
	r1 := startServer(t, dir, "r1", "--replicaof", host, port)
	startServer(t, dir, "r2", "--replicaof", host, port)
	pc := redis.NewClient(&redis.Options{Addr: primary})
	defer pc.Close()
	replicas := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			info, _ := pc.Info(ctx, "replication").Result()
			if strings.Contains(info, fmt.Sprintf("connected_slaves:%d", want)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the primary has not %d replicas after 20s: %s", want, info)
			}
		}
	}
	replicas(2)
	g := newGen(t, Options{URL: "redis://" + primary + "/0", Layout: l, Namespace: freshNamespace(t, pc)})
	check := func(what string, want ...string) []Finding {
		t.Helper()
		fs, err := g.CheckRedis(ctx)
		if err != nil {
			t.Fatalf("%s: CheckRedis: %v", what, err)
		}
		if got := settings(fs); !slices.Equal(got, want) {
			t.Fatalf("%s: CheckRedis found %q; want %q (%v)", what, got, want, fs)
		}
		return fs
	}
	check("as docs/redisgen.md asks")

	if err := pc.ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}
	fs := check("min-replicas-to-write 0", "min-replicas-to-write")
	if s := fs[0].String(); !strings.Contains(s, "old primary") || !strings.Contains(s, "same IDs") {
		t.Errorf("the finding does not say what duplicate it prevents: %s", s)
	}
	if err := pc.ConfigSet(ctx, "appendonly", "no").Err(); err != nil {
		t.Fatal(err)
	}
	check("and appendonly no", "appendonly", "min-replicas-to-write")
	if err := pc.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: r1})
	defer rc.Close()
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	replicas(1)
	check("one replica left, appendonly no", "appendonly", "connected replicas")

	// A lone server: no failover, so only persistence applies.
	lone := startServer(t, dir, "lone")
	lg := newGen(t, Options{URL: "redis://" + lone + "/0", Layout: l})
	if fs, err := lg.CheckRedis(ctx); err != nil || !slices.Equal(settings(fs), []string{"appendonly"}) {
		t.Fatalf("lone server without AOF: %v, %v; want appendonly alone", fs, err)
	}

	// CONFIG renamed away, as managed services do.
	hidden := startServer(t, dir, "hidden", "--rename-command", "CONFIG", "")
	hg := newGen(t, Options{URL: "redis://" + hidden + "/0", Layout: l})
	fs, err := hg.CheckRedis(ctx)
	if !errors.Is(err, ErrUnchecked) || !strings.Contains(err.Error(), "appendonly") || len(fs) != 0 {
		t.Fatalf("CONFIG renamed: %v, %v; want ErrUnchecked naming appendonly and no finding", fs, err)
	}
}
