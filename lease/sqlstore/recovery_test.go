package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/testenv"
	"github.com/flurryid/flurry/lease/leasetest"
)

// TestMeasureRecovery prints, for each kind of outage of PostgreSQL and of
// MariaDB/MySQL, how long after its end the first renewal succeeds
// (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for _, svc := range []testenv.Service{testenv.Postgres, testenv.MySQL} {
		for _, o := range testenv.Outages {
			t.Run(svc.Name+"/"+o.String(), func(t *testing.T) {
				t.Parallel()
				p, u := testenv.ProxyURL(t, svc.URL(t))
				s := openStore(t, u)
				t.Cleanup(func() { s.Close() })
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				l, err := s.Acquire(ctx, leasetest.Scope(t), 1, "recovery", time.Minute)
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
}
