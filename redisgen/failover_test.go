package redisgen

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// failoverTime is how long the test's failover takes, from the SIGKILL of the
// primary to the proxy's repointing at the promoted replica: about what a
// scripted promotion with a VIP move took when it was measured (~100 ms), far
// below the seconds Sentinel needs to notice a dead primary.
const failoverTime = 100 * time.Millisecond

// TestPlainPathFastFailover fails a namespace over, under load, from a primary
// to an asynchronous replica that lags: the primary is killed (SIGKILL) just
// after a script call confirmed a tick, the replica is promoted (REPLICAOF NO
// ONE), and the proxy the client reaches Redis through (a VIP) is repointed at
// it, its connections reset; all in failoverTime. The replica's copy of the
// counter lacks the slots of the last moments, so a plain HINCRBY taken from it
// within the window of the old primary's confirmation is a slot issued twice.
// Every window New accepts must issue none; a window it refuses does not run.
func TestPlainPathFastFailover(t *testing.T) {
	l := mustLayout(t, "twitter")
	for _, w := range []time.Duration{time.Second, 500 * time.Millisecond, 0, -1} {
		name := w.String()
		switch w {
		case 0:
			name = "default"
		case -1:
			name = "off"
		}
		t.Run(name, func(t *testing.T) { fastFailover(t, l, w) })
	}
}

func fastFailover(t *testing.T, l *layout.Layout, window time.Duration) {
	ctx := testCtx(t)
	portA, portB := testenv.FreePort(t), testenv.FreePort(t)
	primary := testenv.StartRedis(t, portA)
	testenv.StartRedis(t, portB)
	addrA, addrB := "127.0.0.1:"+strconv.Itoa(portA), "127.0.0.1:"+strconv.Itoa(portB)
	ca := redis.NewClient(&redis.Options{Addr: addrA})
	t.Cleanup(func() { ca.Close() })
	cb := redis.NewClient(&redis.Options{Addr: addrB})
	t.Cleanup(func() { cb.Close() })

	// B replicates A through a proxy that can hold the stream back: a lagging
	// replica on demand.
	if err := ca.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	repl := testenv.StartProxy(t, addrA)
	replHost, replPort, _ := strings.Cut(repl.Addr(), ":")
	if err := cb.Do(ctx, "replicaof", replHost, replPort).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, _ := cb.Info(ctx, "replication").Result(); strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica did not connect to the primary")
		}
	}

	// The Generator reaches Redis through a proxy that stands for a VIP.
	vip := testenv.StartProxy(t, addrA)
	c := redis.NewClient(&redis.Options{Addr: vip.Addr(), ContextTimeoutEnabled: true, PoolSize: 16,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	g, err := New(ctx, Options{Client: c, Namespace: "failover", Layout: l, PlainWindow: window, BehindWait: time.Second})
	if err != nil {
		if window > 0 && strings.Contains(err.Error(), "failover") {
			t.Logf("New refuses PlainWindow %v: %v", window, err)
			return
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}

	// Load: goroutines calling Next until stop, each keeping its IDs; errors
	// (while the primary is gone) are counted and retried after a pause.
	const goroutines = 8
	var (
		mu       sync.Mutex
		ids      []flurry.ID
		issued   atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				id, err := g.Next(cctx)
				cancel()
				if err != nil {
					failures.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				issued.Add(1)
			}
		})
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	waitIssued := func(n int64, what string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); issued.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d IDs issued, want %d (%d failures)", what, issued.Load(), n, failures.Load())
			}
		}
	}
	waitIssued(2000, "warming up")

	// The replica stops receiving once its copy of the counter stands in the
	// tick the Generator confirmed last (a replica a few writes behind, the
	// usual lag); 50 IDs later the primary dies.
	field := g.params.counterField([]string{"1", "1"})
	for deadline := time.Now().Add(20 * time.Second); ; {
		if is := g.cur.Load(); is != nil {
			v := is.valid.Load()
			x, err := cb.HGet(ctx, lastKey("failover"), field).Int64()
			if err == nil && (window < 0 || v != nil && (x-1)/4096 == v.cur.tick) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica's counter never stood in the confirmed tick")
		}
	}
	repl.Hang()
	waitIssued(issued.Load()+50, "with the replica held back")
	if err := primary.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	vip.Cut()
	killed := time.Now()
	if err := cb.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(killed.Add(failoverTime)))
	mu.Lock()
	var maxSlot int64 // the highest slot the old primary issued
	for _, id := range ids {
		p, _ := l.Decompose(id)
		maxSlot = max(maxSlot, p.Tick*4096+p.Sequence)
	}
	before := len(ids)
	mu.Unlock()
	vip.Retarget(addrB)
	vip.Restore()
	took := time.Since(killed)

	// The promoted replica's counter must lack slots the old primary issued,
	// or the test shows nothing.
	raw, err := cb.HGet(ctx, lastKey("failover"), g.params.counterField([]string{"1", "1"})).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if lag := maxSlot + 1 - raw; lag <= 0 {
		t.Fatalf("the promoted replica's counter %d is not behind the old primary's last slot %d", raw, maxSlot)
	}

	// Load on the new primary for longer than the longest window.
	waitIssued(int64(before)+2000, "after the failover")
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	count := map[flurry.ID]int{}
	var dups []string
	for _, id := range ids {
		if count[id]++; count[id] == 2 && len(dups) < 5 {
			p, _ := l.Decompose(id)
			dups = append(dups, fmt.Sprintf("%d (tick %d, sequence %d)", id, p.Tick, p.Sequence))
		}
	}
	n := 0
	for _, k := range count {
		n += k - 1
	}
	t.Logf("PlainWindow %v: %d IDs (%d after the failover), %d failed calls; failover %v; the replica lagged %d slots; %d issued twice",
		window, len(ids), len(ids)-before, failures.Load(), took.Round(time.Millisecond), maxSlot+1-raw, n)
	if n > 0 {
		t.Errorf("PlainWindow %v: %d IDs issued twice across a failover of %v to a replica %d slots behind, e.g. %s",
			window, n, took.Round(time.Millisecond), maxSlot+1-raw, strings.Join(dups, ", "))
	}
}
