package segment

import (
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
)

// stepAfter runs the dynamic-step rule for an allocator whose last fresh range had
// step and was fetched `since` ago.
func stepAfter(opts Options, step, minStep int64, since time.Duration, rate float64, left int64) int64 {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if opts.Target == 0 {
		opts.Target = defaultTarget
	}
	if opts.MaxStep == 0 {
		opts.MaxStep = defaultMaxStep
	}
	a := &Allocator{opts: opts, clk: clk, step: step, minStep: minStep, rate: rate}
	a.lastFetch = clk.Now()
	clk.Add(since)
	s := &seg{first: 1, last: left}
	a.cur.Store(s)
	return a.nextStep()
}

func TestLeafDynamicStep(t *testing.T) {
	for _, c := range []struct {
		name          string
		opts          Options
		step, minStep int64
		since         time.Duration
		rate          float64
		left          int64
		want          int64
	}{
		{"under Target doubles", Options{}, 1000, 1000, time.Minute, 0, 0, 2000},
		{"doubling stops at MaxStep", Options{}, 600_000, 1000, time.Minute, 0, 0, 1_000_000},
		{"at MaxStep stays", Options{}, 1_000_000, 1000, time.Minute, 0, 0, 1_000_000},
		{"between Target and twice Target stays", Options{}, 4000, 1000, 20 * time.Minute, 0, 0, 4000},
		{"over twice Target halves", Options{}, 4000, 1000, 31 * time.Minute, 0, 0, 2000},
		{"never below the configured step", Options{}, 1000, 1000, time.Hour, 0, 0, 1000},
		{"a raised configured step wins", Options{}, 1000, 5000, time.Minute, 0, 0, 5000},
		{"custom Target", Options{Target: time.Second}, 1000, 100, 3 * time.Second, 0, 0, 500},
		// Leaf's MAX_STEP gives 20 s at 50k/s; a 10-minute runway needs 30M buffered.
		{"runway beats MaxStep", Options{Runway: 10 * time.Minute}, 1_000_000, 1000, time.Minute, 50_000, 900_000, 30_000_000 - 900_000},
		{"runway already covered", Options{Runway: time.Second}, 1000, 1000, time.Minute, 50_000, 900_000, 2000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := stepAfter(c.opts, c.step, c.minStep, c.since, c.rate, c.left); got != c.want {
				t.Fatalf("next step %d, want %d", got, c.want)
			}
		})
	}
}
