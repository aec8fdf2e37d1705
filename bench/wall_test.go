package bench

import (
	"runtime"
	"testing"
	"time"
)

// wallRun is the outcome of a fixed-duration run.
type wallRun struct {
	ids     int64
	elapsed time.Duration
	mallocs uint64
	bytes   uint64
}

// measureWall runs fn (a fixed-duration run that returns how many IDs it issued)
// b.N times, and reports ns/op, B/op and allocs/op per ID instead of per run:
// these benchmarks last seconds of wall time per iteration, so with the default
// -benchtime b.N is 1.
func measureWall(b *testing.B, fn func() int64) wallRun {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var r wallRun
	for range b.N {
		r.ids += fn()
	}
	r.elapsed = time.Since(start)
	runtime.ReadMemStats(&after)
	r.mallocs = after.Mallocs - before.Mallocs
	r.bytes = after.TotalAlloc - before.TotalAlloc
	if r.ids > 0 {
		b.ReportMetric(float64(r.elapsed.Nanoseconds())/float64(r.ids), "ns/op")
		b.ReportMetric(float64(r.bytes/uint64(r.ids)), "B/op")
		b.ReportMetric(float64(r.mallocs/uint64(r.ids)), "allocs/op")
		b.ReportMetric(float64(r.ids)/r.elapsed.Seconds(), "ids/s")
	}
	return r
}
