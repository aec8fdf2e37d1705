package sqlstore

import (
	"context"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestMeasureRecovery prints, for each kind of outage of PostgreSQL and of
// MariaDB/MySQL, how long after its end the first Take succeeds
// (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for name, svc := range map[string]testenv.Service{"Postgres": testenv.Postgres, "MySQL": testenv.MySQL} {
		for _, o := range testenv.Outages {
			t.Run(name+"/"+o.String(), func(t *testing.T) {
				t.Parallel()
				p, u := testenv.ProxyURL(t, svc.URL(t))
				s := openStore(t, u, Options{})
				tag := segmenttest.TagName(t)
				if err := s.Create(testCtx(t), segment.Tag{Name: tag, Step: 10}); err != nil {
					t.Fatal(err)
				}
				testenv.Measure(t, p, o, func(ctx context.Context) error {
					_, err := s.Take(ctx, tag, 10, 0, 0)
					return err
				})
			})
		}
	}
}
