package zkstore

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// renewer opens a store behind its own proxy to ZooKeeper, acquires a lease, and
// returns the proxy with a call that renews the lease.
func renewer(t *testing.T) (*testenv.Proxy, func(context.Context) error) {
	p, u := testenv.ProxyURL(t, testenv.ZooKeeper.URL(t))
	s := openURL(t, u, "flurry-test/lease")
	l, err := s.Acquire(testCtx(t), leasetest.Scope(t), 1, "recovery", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return p, func(ctx context.Context) error {
		_, err := s.Renew(ctx, l, time.Minute, time.Now().UnixMilli()) // the token stays l's
		return err
	}
}

// TestRecovery: after ZooKeeper refused, hung, dropped or cut connections, the
// first renewal made once it is back succeeds.
func TestRecovery(t *testing.T) { testenv.CheckRecovery(t, renewer) }

// TestMeasureRecovery prints, for each kind of outage of ZooKeeper, how long after
// its end the first renewal succeeds (FLURRY_MEASURE_RECOVERY=1; see
// testenv.MeasurePlan).
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
