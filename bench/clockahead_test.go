package bench

import (
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
)

// BenchmarkClockAhead measures how far clock.System ends up ahead of the wall clock
// (time.Now) after 16 goroutines read it for FLURRY_BENCH_CLOCK_SECONDS (default 2)
// on GOMAXPROCS CPUs. ahead-ms is the smallest System.Now() - time.Now() over 100
// samples taken afterwards (System read second, so about 30 ns of it is the read
// itself). It is here because IDs carry System's time: whatever System runs ahead
// of the wall clock adds to the drift BenchmarkBorrow measures.
func BenchmarkClockAhead(b *testing.B) {
	d := envSeconds("FLURRY_BENCH_CLOCK_SECONDS", 2)
	for _, workers := range []int{2, 16} {
		b.Run("system/goroutines="+itoa(workers), func(b *testing.B) {
			var ahead time.Duration
			measureWall(b, func() int64 {
				c := clock.NewSystem()
				var wg sync.WaitGroup
				var total int64
				var mu sync.Mutex
				end := time.Now().Add(d)
				for range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var n int64
						for time.Now().Before(end) {
							for range 1000 {
								c.Now()
							}
							n += 1000
						}
						mu.Lock()
						total += n
						mu.Unlock()
					}()
				}
				wg.Wait()
				ahead = max(ahead, clockAhead(c))
				return total
			})
			b.ReportMetric(float64(ahead.Nanoseconds())/1e6, "ahead-ms")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
