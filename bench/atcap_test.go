package bench

import (
	"testing"
	"time"

	"github.com/flurryid/flurry/snowflake"
)

// slowCall is the latency above which a call counts as slow in BenchmarkAtCap.
const slowCall = 2 * time.Millisecond

// capStats is what one goroutine saw while issuing as fast as it could.
type capStats struct {
	ids, slow, notIncreasing int64
	errs                     int64
	firstErr                 error
	maxLat                   time.Duration
}

// BenchmarkAtCap issues IDs on the twitter layout (cap 4,096,000 IDs/s per node)
// from one goroutine as fast as it can for FLURRY_BENCH_ATCAP_SECONDS (default 3)
// of wall time, and reports the rate achieved (ids/s), its share of the cap (cap%),
// the slowest single call (max-µs) and the number of calls slower than 2 ms
// (calls>2ms). ns/op is wall time per ID.
//
// A call's latency is measured from the end of the previous call to the end of
// this one with one monotonic clock read (time.Since) per call, so it includes the
// loop and that read (about 30 ns): an upper bound.
func BenchmarkAtCap(b *testing.B) {
	d := envSeconds("FLURRY_BENCH_ATCAP_SECONDS", 3)
	b.Run("flurry-wait", func(b *testing.B) {
		g := newFlurry(b, layoutTw, false, snowflake.Options{Overflow: snowflake.Wait})
		var cs capStats
		r := measureWall(b, func() int64 {
			s := runAtCap(d, func() (int64, error) {
				id, err := g.Next(bg)
				return int64(id), err
			})
			cs.merge(s)
			return s.ids
		})
		cs.report(b, r)
		b.ReportMetric(float64(g.Stats().OverflowWaits), "overflow-waits")
	})
	b.Run("flurry-wait-coarse", func(b *testing.B) {
		g := newFlurry(b, layoutTw, true, snowflake.Options{Overflow: snowflake.Wait})
		var cs capStats
		r := measureWall(b, func() int64 {
			s := runAtCap(d, func() (int64, error) {
				id, err := g.Next(bg)
				return int64(id), err
			})
			cs.merge(s)
			return s.ids
		})
		cs.report(b, r)
		b.ReportMetric(float64(g.Stats().OverflowWaits), "overflow-waits")
	})
	b.Run("bwmarrin", func(b *testing.B) {
		var cs capStats
		r := measureWall(b, func() int64 {
			s := runAtCap(d, func() (int64, error) { return int64(bwNodeTw.Generate()), nil })
			cs.merge(s)
			return s.ids
		})
		cs.report(b, r)
	})
	// baseline-spin issues nothing: it only reads the clock in the same loop, to show
	// the stalls this machine (scheduler, hypervisor) adds with no sleep at all.
	b.Run("baseline-spin", func(b *testing.B) {
		var cs capStats
		var n int64
		r := measureWall(b, func() int64 {
			s := runAtCap(d, func() (int64, error) { n++; return n, nil })
			cs.merge(s)
			return s.ids
		})
		cs.report(b, r)
	})
}

// runAtCap calls next for d and returns what it saw. next is a func value for
// both implementations alike; the call costs a few ns against a 244 ns budget.
func runAtCap(d time.Duration, next func() (int64, error)) capStats {
	var s capStats
	var last int64 = -1
	base := time.Now()
	prev := time.Since(base)
	for {
		id, err := next()
		now := time.Since(base)
		if err != nil {
			s.errs++
			if s.firstErr == nil {
				s.firstErr = err
			}
		} else {
			if id <= last {
				s.notIncreasing++
			}
			last = id
			s.ids++
		}
		lat := now - prev
		prev = now
		if lat > s.maxLat {
			s.maxLat = lat
		}
		if lat > slowCall {
			s.slow++
		}
		if now >= d {
			return s
		}
	}
}

func (s *capStats) merge(o capStats) {
	s.ids += o.ids
	s.slow += o.slow
	s.notIncreasing += o.notIncreasing
	s.errs += o.errs
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
	s.maxLat = max(s.maxLat, o.maxLat)
}

func (s *capStats) report(b *testing.B, r wallRun) {
	if s.notIncreasing > 0 {
		b.Errorf("%d IDs were not larger than the one before", s.notIncreasing)
	}
	rate := float64(r.ids) / r.elapsed.Seconds()
	b.ReportMetric(100*rate/twitterCap, "cap%")
	b.ReportMetric(float64(s.maxLat.Nanoseconds())/1e3, "max-µs")
	b.ReportMetric(float64(s.slow), "calls>2ms")
	b.ReportMetric(float64(s.errs), "errors")
	if s.errs > 0 {
		b.Logf("%d calls failed; the first: %v", s.errs, s.firstErr)
	}
}
