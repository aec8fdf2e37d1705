//go:build unix

package etcdstore

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

// renewWithin renews for 3s under a deadline d and checks that the call kept to it.
func renewWithin(t *testing.T, s *Store, l lease.Lease, d time.Duration) (lease.Lease, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	l2, err := s.Renew(ctx, l, 3*time.Second, time.Now().UnixMilli()+1000)
	// A Renew that ignored its deadline would hang on a stopped server until
	// TCP gave up, minutes later; the slack is for a busy machine.
	if took := time.Since(start); took > d+10*time.Second {
		t.Errorf("Renew took %v with a %v deadline", took, d)
	}
	return l2, err
}

func TestOutage(t *testing.T) {
	dir := t.TempDir()
	client, peer := testenv.FreePort(t), testenv.FreePort(t)
	srv := testenv.StartEtcd(t, dir, client, peer)
	s := open(t, fmt.Sprintf("etcd://127.0.0.1:%d/outage", client), Options{})
	ctx := testCtx(t)
	const ttl = 3 * time.Second
	l, err := s.Acquire(ctx, "outage", 1, "a", ttl)
	if err != nil {
		t.Fatal(err)
	}

	// A stopped server: Renew fails within its deadline, and not with ErrLost.
	testenv.Pause(t, srv)
	_, err = renewWithin(t, s, l, 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if err == nil || errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a stopped server: %v; want a non-ErrLost error", err)
	}
	t.Logf("stopped server: %v", err)
	// Back before the TTL passed: the lease is still ours.
	if l, err = renewWithin(t, s, l, 2*time.Second); err != nil {
		t.Fatalf("Renew after the server came back within the TTL: %v", err)
	}

	// Stopped for longer than the TTL: etcd expires the lease when it resumes.
	testenv.Pause(t, srv)
	time.Sleep(ttl + 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if _, err = renewWithin(t, s, l, 3*time.Second); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew after an outage longer than the TTL: %v; want ErrLost", err)
	}
	var next lease.Lease
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if next, err = s.Acquire(ctx, "outage", 1, "b", ttl); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || next.Mark == 0 {
		t.Fatalf("Acquire after the expiry = %+v, %v; want value 0 with its mark", next, err)
	}

	// A killed server fails within the deadline; etcd keeps leases and marks on
	// disk, and a restarted leader gives every lease its full TTL again.
	srv.Process.Kill()
	srv.Wait()
	if _, err = renewWithin(t, s, next, time.Second); err == nil || errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a killed server: %v; want a non-ErrLost error", err)
	}
	t.Logf("killed server: %v", err)
	testenv.StartEtcd(t, dir, client, peer)
	l3, err := renewWithin(t, s, next, 5*time.Second)
	if err != nil || l3.Mark < next.Mark {
		t.Fatalf("Renew after a restart = %+v, %v; want the lease and its mark kept", l3, err)
	}
}
