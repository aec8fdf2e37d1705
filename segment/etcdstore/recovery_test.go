package etcdstore

import (
	"context"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestMeasureRecovery prints, for each kind of outage of etcd, how long after its
// end the first Take succeeds (FLURRY_MEASURE_RECOVERY=1; see testenv.MeasurePlan).
func TestMeasureRecovery(t *testing.T) {
	testenv.MeasureRecovery(t)
	for _, o := range testenv.Outages {
		t.Run(o.String(), func(t *testing.T) {
			t.Parallel()
			p, u := testenv.ProxyURL(t, testenv.Etcd.URL(t))
			s := open(t, u, Options{Prefix: "flurry-test"})
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
