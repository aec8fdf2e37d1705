package leafzk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/conformance"
)

// TestTakeover: a takeover of a live lease gives a new token and retires the old
// one (its Renew, Release and another Takeover fail with ErrLost), reports the
// mark from before it, raises the mark, and counts one more epoch, kept in
// flurry's own record; of eight takeovers of one lease at once exactly one wins;
// a lease that expired, and one whose Leaf node a Leaf server wrote since, are not
// taken over.
func TestTakeover(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	addr := freeAddr(t)
	ctx := conformance.Context(t, time.Minute)
	s := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
	l, err := s.Acquire(ctx, "default", 1024, "a", time.Minute)
	if err != nil || l.Epoch != 1 {
		t.Fatalf("Acquire = %+v, %v; want epoch 1", l, err)
	}
	reserved := time.Now().UnixMilli() + 4000
	if l, err = s.Renew(ctx, l, time.Minute, reserved); err != nil || l.Epoch != 2 {
		t.Fatalf("Renew = %+v, %v; want epoch 2", l, err)
	}
	s2 := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
	n, err := s2.Takeover(ctx, lease.Lease{Scope: l.Scope, Value: l.Value, Token: l.Token}, "b", time.Minute, reserved+1000)
	if err != nil {
		t.Fatalf("Takeover of the live lease: %v", err)
	}
	if n.Token == "" || n.Token == l.Token || n.Value != l.Value || n.Owner != "b" || n.Mark != reserved || n.Epoch != 3 || !n.Expires.After(time.Now()) {
		t.Fatalf("Takeover = %+v; want a new token for b, the mark before it (%d), epoch 3", n, reserved)
	}
	if _, err := s.Renew(ctx, l, time.Minute, reserved+5); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew with the retired token: %v; want ErrLost", err)
	}
	if err := s.Release(ctx, l, 1); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Release with the retired token: %v; want ErrLost", err)
	}
	if _, err := s.Takeover(ctx, l, "c", time.Minute, 1); !errors.Is(err, lease.ErrLost) {
		t.Errorf("a second Takeover with the retired token: %v; want ErrLost", err)
	}
	recs, err := s.List(ctx, "default")
	if err != nil || len(recs) != 1 || recs[0].Token != n.Token || recs[0].Mark < reserved+1000 || recs[0].Epoch != 3 {
		t.Fatalf("List after the takeover = %+v, %v; want b's lease, mark %d, epoch 3", recs, err, reserved+1000)
	}
	n2, err := s2.Renew(ctx, n, time.Minute, reserved+2000)
	if err != nil || n2.Epoch != 4 {
		t.Fatalf("Renew of the new lease = %+v, %v; want epoch 4", n2, err)
	}
	if err := s2.Release(ctx, n2, reserved+2000); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.List(ctx, "default"); err != nil || recs[0].Epoch != 4 {
		t.Fatalf("List after release = %+v, %v; want the epoch kept, 4", recs, err)
	}

	// Copies of one journal race.
	own := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
	own.SetListening(tcpAddr(t, addr))
	crashed, err := own.Acquire(ctx, "default", 1024, "crashed", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		won    []lease.Lease
		others []error
		wg     sync.WaitGroup
	)
	for i := range 8 {
		st := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
		wg.Go(func() {
			n, err := st.Takeover(ctx, crashed, fmt.Sprintf("copy-%d", i), time.Minute, int64(i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, n)
			case !errors.Is(err, lease.ErrLost):
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || len(others) > 0 {
		t.Fatalf("%d of 8 takeovers of one lease won (%+v), errors %v; want exactly one", len(won), won, others)
	}

	// A Leaf server wrote the node since flurry's last write: it is that
	// server's now.
	leaf := newLeaf(t, servers, name, addr, nil)
	leaf.node = s.leafPath(nodeName(t, s, addr))
	leaf.updateNewData()
	if _, err := s.Takeover(ctx, won[0], "d", time.Minute, 1); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Takeover after a Leaf server wrote the node: %v; want ErrLost", err)
	}
}

// TestTakeoverExpired: a lease that expired by ZooKeeper's clock is not taken
// over, even when no one took it since; nor is one whose Leaf server answers at
// the node's address.
func TestTakeoverExpired(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	addr := freeAddr(t)
	ctx := conformance.Context(t, time.Minute)
	s := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
	l, err := s.Acquire(ctx, "default", 1024, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := s.Takeover(ctx, l, "b", time.Minute, 1); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Takeover of an expired lease: %v; want ErrLost", err)
	}
	l, err = s.Renew(ctx, l, time.Minute, 1) // no one took it: renewed
	if err != nil {
		t.Fatal(err)
	}
	leafHTTP(t, addr) // a Leaf server started there without ZooKeeper
	other := openStore(t, servers, name, func(o *Options) { o.NoProbe = false; o.Addr = addr })
	if _, err := other.Takeover(ctx, l, "b", time.Minute, 1); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Takeover beside a Leaf server answering at %s: %v; want ErrLost", addr, err)
	}
}

// nodeName returns the name of addr's node in st's registry.
func nodeName(t testing.TB, st *Store, addr string) string {
	t.Helper()
	nodes, err := st.nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.addr == addr {
			return n.name
		}
	}
	t.Fatalf("no node of %s", addr)
	return ""
}
