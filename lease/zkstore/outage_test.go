//go:build unix

package zkstore

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/verify/testenv"
)

// renewWithin renews for ttl under a deadline d and checks that the call kept to
// it.
func renewWithin(t *testing.T, s *Store, l lease.Lease, ttl, d time.Duration) (lease.Lease, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	l2, err := s.Renew(ctx, l, ttl, time.Now().UnixMilli()+1000)
	// go-zookeeper's calls take no context: a Renew that ignored its deadline
	// would wait on a stopped server until the client gave up the connection;
	// the slack is for a busy machine.
	if took := time.Since(start); took > d+10*time.Second {
		t.Errorf("Renew took %v with a %v deadline", took, d)
	}
	return l2, err
}

// TestOutage runs a lease through a stopped, a long-stopped and a killed and
// restarted ZooKeeper of its own.
func TestOutage(t *testing.T) {
	dir := t.TempDir()
	port := testenv.FreePort(t)
	srv := testenv.StartZooKeeper(t, dir, port)
	s := openURL(t, fmt.Sprintf("zk://127.0.0.1:%d/outage", port), "")
	ctx := testCtx(t)
	const ttl = 3 * time.Second
	l, err := s.Acquire(ctx, "outage", 1, "a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	// A stopped server: Renew fails within its deadline, and not with ErrLost.
	testenv.Pause(t, srv)
	_, err = renewWithin(t, s, l, ttl, 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if err == nil || errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a stopped server: %v; want a non-ErrLost error", err)
	}
	t.Logf("stopped server: %v", err)
	// Back before the TTL passed: the lease is still ours.
	if l, err = renewWithin(t, s, l, ttl, 5*time.Second); err != nil {
		t.Fatalf("Renew after the server came back within the TTL: %v", err)
	}
	// Stopped for longer than the TTL: the leader's clock went on, so the lease
	// has expired when it resumes.
	testenv.Pause(t, srv)
	time.Sleep(ttl + 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if _, err = renewWithin(t, s, l, ttl, 5*time.Second); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew after an outage longer than the TTL: %v; want ErrLost", err)
	}
	next, err := s.Acquire(ctx, "outage", 1, "b", 20*time.Second)
	if err != nil || next.Mark == 0 {
		t.Fatalf("Acquire after the expiry = %+v, %v; want value 0 with its mark", next, err)
	}
	// A killed server fails calls within their deadline; ZooKeeper keeps its
	// nodes on disk, and the lease outlives a restart within its TTL.
	srv.Process.Kill()
	srv.Wait()
	if _, err = renewWithin(t, s, next, 20*time.Second, time.Second); err == nil || errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a killed server: %v; want a non-ErrLost error", err)
	}
	t.Logf("killed server: %v", err)
	testenv.StartZooKeeper(t, dir, port)
	l3, err := renewWithin(t, s, next, 20*time.Second, 10*time.Second)
	if err != nil || l3.Mark < next.Mark {
		t.Fatalf("Renew after a restart = %+v, %v; want the lease and its mark kept", l3, err)
	}
}
