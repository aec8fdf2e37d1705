package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// renewer returns a setup for testenv.CheckRecovery: a store behind its own proxy
// to svc with a lease acquired, and a call that renews the lease.
func renewer(svc testenv.Service) func(t *testing.T) (*testenv.Proxy, func(context.Context) error) {
	return func(t *testing.T) (*testenv.Proxy, func(context.Context) error) {
		p, u := testenv.ProxyURL(t, svc.URL(t))
		s := openStore(t, u)
		t.Cleanup(func() { s.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l, err := s.Acquire(ctx, leasetest.Scope(t), 1, "recovery", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return p, func(ctx context.Context) error {
			_, err := s.Renew(ctx, l, time.Minute, time.Now().UnixMilli()) // the token stays l's
			return err
		}
	}
}

// TestRecovery: after the database refused, hung, dropped or cut connections, the
// first renewal made once it is back succeeds.
func TestRecovery(t *testing.T) {
	t.Run("Postgres", func(t *testing.T) { testenv.CheckRecovery(t, renewer(testenv.Postgres)) })
	t.Run("MySQL", func(t *testing.T) { testenv.CheckRecovery(t, renewer(testenv.MySQL)) })
}

// TestMeasureRecovery prints, for each kind of outage of PostgreSQL and of
// MariaDB/MySQL, how long after its end the first renewal succeeds
// (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for name, svc := range map[string]testenv.Service{"Postgres": testenv.Postgres, "MySQL": testenv.MySQL} {
		for _, o := range testenv.Outages {
			t.Run(name+"/"+o.String(), func(t *testing.T) {
				t.Parallel()
				p, call := renewer(svc)(t)
				testenv.Measure(t, p, o, call)
			})
		}
	}
}
