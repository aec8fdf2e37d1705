package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// renewer opens a store behind its own proxy to Redis, acquires a lease, and
// returns the proxy with a call that renews the lease.
func renewer(t *testing.T) (*testenv.Proxy, func(context.Context) error) {
	p, u := testenv.ProxyURL(t, testenv.Redis.URL(t))
	s := open(t, u, Options{Prefix: "flurry-test"})
	l, err := s.Acquire(testCtx(t), leasetest.Scope(t), 1, "recovery", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return p, func(ctx context.Context) error {
		_, err := s.Renew(ctx, l, time.Minute, time.Now().UnixMilli()) // the token stays l's
		return err
	}
}

// TestRecovery: after Redis refused, hung, dropped or cut connections, the first
// renewal made once it is back succeeds.
func TestRecovery(t *testing.T) { testenv.CheckRecovery(t, renewer) }

// TestMeasureRecovery prints, for each kind of outage of Redis, how long after its
// end the first renewal succeeds (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for _, o := range testenv.Outages {
		t.Run(o.String(), func(t *testing.T) {
			t.Parallel()
			p, call := renewer(t)
			testenv.Measure(t, p, o, call)
		})
	}
}

// TestRecoveryAfterFailedDials: go-redis stops dialing once PoolSize dials in a
// row failed, fails every call at once with the last dial error, and probes the
// server once a second until a dial succeeds. With pool_size=1 one refused call is
// enough; still, the first call made after Redis is back must succeed.
func TestRecoveryAfterFailedDials(t *testing.T) {
	p, u := testenv.ProxyURL(t, testenv.Redis.URL(t))
	s := open(t, u+"?pool_size=1", Options{Prefix: "flurry-test"})
	l, err := s.Acquire(testCtx(t), leasetest.Scope(t), 1, "recovery", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	plan := testenv.CheckPlan(testenv.Refuse)
	plan.Every = 10 * time.Millisecond // the first call after the return comes before the next probe
	r := testenv.RecoverFrom(t, p, plan, func(ctx context.Context) error {
		_, err := s.Renew(ctx, l, time.Minute, time.Now().UnixMilli()) // the token stays l's
		return err
	})
	if r.Recovered < 0 || r.Attempts > 1 {
		t.Errorf("%v\nwant the first call made after Redis came back to succeed", r)
	} else {
		t.Log(r)
	}
}
