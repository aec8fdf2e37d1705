package bench

import (
	"encoding/binary"
	"flag"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/snowflake"
	"github.com/google/uuid"
)

var borrowSeconds = flag.Float64("borrow-seconds", 0, "run time of BenchmarkBorrow/flurry in seconds (default: $FLURRY_BENCH_BORROW_SECONDS, else 10)")

const borrowMaxDrift = 50 * time.Millisecond

// driftStats is what one goroutine saw of how far IDs ran ahead of the clock.
type driftStats struct {
	ids, notIncreasing, overLimit int64
	errs                          int64
	firstErr                      error
	// maxAtReturn is the largest (time of the ID) - (wall time when the call
	// returned); maxAtStart uses the wall time when the call started instead, and is
	// larger by the time a call spent waiting.
	maxAtReturn, maxAtStart time.Duration
}

func (s *driftStats) merge(o driftStats) {
	s.ids += o.ids
	s.notIncreasing += o.notIncreasing
	s.overLimit += o.overLimit
	s.errs += o.errs
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
	s.maxAtReturn = max(s.maxAtReturn, o.maxAtReturn)
	s.maxAtStart = max(s.maxAtStart, o.maxAtStart)
}

// hammer runs next from `workers` goroutines for d. next returns an ID as an
// ordered integer and the ID's time in Unix nanoseconds, or an error, which is
// counted (errs) and the run goes on. Wall time is the wall
// clock itself, time.Now().UnixNano(), read once between calls (its end of one
// call is the start of the next).
func hammer(workers int, d, limit time.Duration, next func() (ord, idNs int64, err error)) driftStats {
	var (
		mu  sync.Mutex
		all = driftStats{maxAtReturn: -1 << 62, maxAtStart: -1 << 62}
		wg  sync.WaitGroup
	)
	end := time.Now().Add(d).UnixNano()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := driftStats{maxAtReturn: -1 << 62, maxAtStart: -1 << 62}
			last := int64(-1 << 63)
			t0 := time.Now().UnixNano()
			for {
				ord, idNs, err := next()
				t1 := time.Now().UnixNano()
				if err != nil {
					s.errs++
					if s.firstErr == nil {
						s.firstErr = err
					}
					if t1 >= end {
						break
					}
					t0 = t1
					continue
				}
				if ord <= last {
					s.notIncreasing++
				}
				last = ord
				s.ids++
				atReturn := time.Duration(idNs - t1)
				atStart := time.Duration(idNs - t0)
				s.maxAtReturn = max(s.maxAtReturn, atReturn)
				s.maxAtStart = max(s.maxAtStart, atStart)
				if limit > 0 && atReturn > limit {
					s.overLimit++
				}
				if t1 >= end {
					break
				}
				t0 = t1
			}
			mu.Lock()
			all.merge(s)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

func (s *driftStats) report(b *testing.B, r wallRun) {
	if s.notIncreasing > 0 {
		b.Errorf("%d IDs were not larger than the same goroutine's previous one", s.notIncreasing)
	}
	b.ReportMetric(float64(s.maxAtReturn.Nanoseconds())/1e6, "max-drift-ms")
	b.ReportMetric(float64(s.maxAtStart.Nanoseconds())/1e6, "max-drift-from-call-start-ms")
	b.ReportMetric(100*float64(r.ids)/r.elapsed.Seconds()/twitterCap, "cap%")
	b.ReportMetric(float64(s.errs), "errors")
	if s.errs > 0 {
		b.Logf("%d calls failed; the first: %v", s.errs, s.firstErr)
	}
}

// clockAhead returns how far c reads ahead of the wall clock (time.Now): the
// smallest c.Now() - time.Now() over 100 samples, c read second.
func clockAhead(c clock.Clock) time.Duration {
	best := time.Duration(1 << 62)
	for range 100 {
		w := time.Now().UnixNano()
		best = min(best, time.Duration(c.Now()-w))
	}
	return best
}

// BenchmarkBorrow hammers a generator from two goroutines and reports how far the
// IDs' time ran ahead of the wall clock: max-drift-ms is the largest
// layout.TimeOf(id) minus the wall time when the call returned, over every ID.
//
// flurry: twitter layout (cap 4,096,000/s), Borrow policy, MaxDrift 50 ms, for
// FLURRY_BENCH_BORROW_SECONDS (or -borrow-seconds; default 10). over-limit counts
// IDs more than MaxDrift ahead, max-excess-ns the largest excess, and clock-ahead-ns
// how far the generator's clock.System reads ahead of time.Now() after the run
// (about 30-50 ns of it is the two reads). uuidv7 (ms in the top 48 bits) and yitter method 1
// (which borrows with no time bound) run for FLURRY_BENCH_PEER_DRIFT_SECONDS
// (default 3).
func BenchmarkBorrow(b *testing.B) {
	d := envSeconds("FLURRY_BENCH_BORROW_SECONDS", 10)
	if *borrowSeconds > 0 {
		d = time.Duration(*borrowSeconds * float64(time.Second))
	}
	peerD := envSeconds("FLURRY_BENCH_PEER_DRIFT_SECONDS", 3)

	b.Run("flurry", func(b *testing.B) {
		clk := clock.NewSystem()
		g := newFlurry(b, layoutTw, false, snowflake.Options{Overflow: snowflake.Borrow, MaxDrift: borrowMaxDrift, Clock: clk})
		l := g.Layout()
		var all driftStats
		r := measureWall(b, func() int64 {
			s := hammer(2, d, borrowMaxDrift, func() (int64, int64, error) {
				id, err := g.Next(bg)
				return int64(id), l.TimeOf(id).UnixNano(), err
			})
			all.merge(s)
			return s.ids
		})
		all.report(b, r)
		st := g.Stats()
		b.ReportMetric(float64(all.overLimit), "over-limit")
		b.ReportMetric(float64(max(0, all.maxAtReturn-borrowMaxDrift).Nanoseconds()), "max-excess-ns")
		b.ReportMetric(float64(clockAhead(clk).Nanoseconds()), "clock-ahead-ns")
		b.ReportMetric(float64(st.MaxDriftSeen.Nanoseconds())/1e6, "stats-max-drift-ms")
		b.ReportMetric(float64(st.Borrowed), "borrowed")
		b.ReportMetric(float64(st.OverflowWaits), "overflow-waits")
	})
	b.Run("uuidv7", func(b *testing.B) {
		var all driftStats
		r := measureWall(b, func() int64 {
			s := hammer(2, peerD, 0, func() (int64, int64, error) {
				u, err := uuid.NewV7()
				if err != nil {
					return 0, 0, err
				}
				// 48-bit ms | 4-bit version | 12-bit sub-ms counter: ordered as a whole.
				hi := binary.BigEndian.Uint64(u[:8])
				return int64(hi), int64(hi>>16) * int64(time.Millisecond), nil
			})
			all.merge(s)
			return s.ids
		})
		all.report(b, r)
	})
	// uuidv7-randpool is uuid.NewV7 with uuid.EnableRandPool (a documented option
	// that buffers crypto/rand), which is fast enough to pass 3906 IDs per ms, the
	// rate above which NewV7's 12-bit counter runs ahead of the clock.
	b.Run("uuidv7-randpool", func(b *testing.B) {
		uuid.EnableRandPool()
		defer uuid.DisableRandPool()
		var all driftStats
		r := measureWall(b, func() int64 {
			s := hammer(2, peerD, 0, func() (int64, int64, error) {
				u, err := uuid.NewV7()
				if err != nil {
					return 0, 0, err
				}
				hi := binary.BigEndian.Uint64(u[:8])
				return int64(hi), int64(hi>>16) * int64(time.Millisecond), nil
			})
			all.merge(s)
			return s.ids
		})
		all.report(b, r)
	})
	b.Run("yitter", func(b *testing.B) {
		y := newYitter(1, 10, 12, twitterEpochMs)
		var all driftStats
		r := measureWall(b, func() int64 {
			s := hammer(2, peerD, 0, func() (int64, int64, error) {
				id := y.NewLong()
				return id, (id>>22 + twitterEpochMs) * int64(time.Millisecond), nil
			})
			all.merge(s)
			return s.ids
		})
		all.report(b, r)
	})
}
