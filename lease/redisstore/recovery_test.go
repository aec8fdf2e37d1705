package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/testenv"
	"github.com/flurryid/flurry/lease/leasetest"
)

// TestMeasureRecovery prints, for each kind of outage of Redis, how long after its
// end the first renewal succeeds (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for _, o := range testenv.Outages {
		t.Run(o.String(), func(t *testing.T) {
			t.Parallel()
			p, u := testenv.ProxyURL(t, testenv.Redis.URL(t))
			s := open(t, u, Options{Prefix: "flurry-test"})
			l, err := s.Acquire(testCtx(t), leasetest.Scope(t), 1, "recovery", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(testenv.RecoverFrom(t, p, testenv.MeasurePlan(o), func(ctx context.Context) error {
				l2, err := s.Renew(ctx, l, time.Minute, time.Now().UnixMilli())
				if err == nil {
					l = l2
				}
				return err
			}))
		})
	}
}
