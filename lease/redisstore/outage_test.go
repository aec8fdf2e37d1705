//go:build unix

package redisstore

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
	port := testenv.FreePort(t)
	srv := testenv.StartRedis(t, port)
	s := open(t, fmt.Sprintf("redis://127.0.0.1:%d/0", port), Options{Prefix: "flurry-test"})
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

	// Stopped for longer than the TTL: the lease is lost, by Redis's clock.
	testenv.Pause(t, srv)
	time.Sleep(ttl + 500*time.Millisecond)
	srv.Process.Signal(syscall.SIGCONT)
	if _, err = renewWithin(t, s, l, 2*time.Second); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew after an outage longer than the TTL: %v; want ErrLost", err)
	}
	if l, err = s.Acquire(ctx, "outage", 1, "b", ttl); err != nil || l.Value != 0 || l.Mark == 0 {
		t.Fatalf("Acquire after the expiry = %+v, %v; want value 0 with its mark", l, err)
	}

	// A killed server fails fast; one restarted without persistence forgot the
	// lease (and, as docs/leases.md warns, the mark).
	srv.Process.Kill()
	srv.Wait()
	if _, err = renewWithin(t, s, l, 2*time.Second); err == nil || errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a killed server: %v; want a non-ErrLost error", err)
	}
	t.Logf("killed server: %v", err)
	testenv.StartRedis(t, port)
	if _, err = renewWithin(t, s, l, 2*time.Second); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Renew against a server that restarted empty: %v; want ErrLost", err)
	}
}
