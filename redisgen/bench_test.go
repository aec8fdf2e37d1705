package redisgen

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

var sinkID flurry.ID

// BenchmarkRedis measures the generator beside plain INCR on the same client and
// server in the same run, so that the ratio says what the script costs over the
// cheapest Redis round trip:
//
//	go test -run '^$' -bench . -benchmem ./redisgen/
//
// Each sub-benchmark reports ids/s (for INCR: counter values per second).
func BenchmarkRedis(b *testing.B) {
	o, err := redis.ParseURL(testenv.Redis.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	o.PoolSize = 64 // one connection per goroutine of the parallel cases
	c := redis.NewClient(o)
	defer c.Close()
	ctx := context.Background()
	l, err := layout.Parse("twitter")
	if err != nil {
		b.Fatal(err)
	}
	newG := func(b *testing.B) *Generator {
		ns := freshNamespace(b, c)
		g := newGen(b, Options{Client: c, Namespace: ns, Layout: l})
		if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
			b.Fatal(err)
		}
		return g
	}
	counter := func(b *testing.B) string {
		key := "{" + freshNamespace(b, c) + "}:incr"
		b.Cleanup(func() { c.Del(context.Background(), key) })
		return key
	}
	idsPerSec := func(b *testing.B, n int64) {
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "ids/s")
	}
	// 64 goroutines: RunParallel starts SetParallelism × GOMAXPROCS of them.
	par := max(1, 64/runtime.GOMAXPROCS(0))

	b.Run("Next", func(b *testing.B) {
		g := newG(b)
		b.ReportAllocs()
		for b.Loop() {
			id, err := g.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sinkID = id
		}
		idsPerSec(b, int64(b.N))
	})
	b.Run("INCR", func(b *testing.B) {
		key := counter(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Incr(ctx, key).Err(); err != nil {
				b.Fatal(err)
			}
		}
		idsPerSec(b, int64(b.N))
	})
	b.Run("Next-parallel64", func(b *testing.B) {
		g := newG(b)
		b.ReportAllocs()
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			var local flurry.ID
			for pb.Next() {
				id, err := g.Next(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				local = id
			}
			_ = local
		})
		idsPerSec(b, int64(b.N))
	})
	b.Run("INCR-parallel64", func(b *testing.B) {
		key := counter(b)
		b.ReportAllocs()
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := c.Incr(ctx, key).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		idsPerSec(b, int64(b.N))
	})
	// Alternating: Next and INCR take turns in blocks of 50 ms (several plain
	// windows, so that Next pays its renewals as in a steady run), the first
	// place alternating by round, so that a busy machine slows both alike. The
	// ratio is the median over the rounds of Next's rate over INCR's in the
	// same round; -count gives several of them.
	alternate := func(b *testing.B, goroutines int) {
		g := newG(b)
		key := counter(b)
		next := func() error { _, err := g.Next(ctx); return err }
		incr := func() error { return c.Incr(ctx, key).Err() }
		var ratios []float64
		var nextIDs, incrIDs int64
		var nextTime, incrTime time.Duration
		round := 0
		for b.Loop() {
			var rate [2]float64
			for i := range 2 {
				f, ids, took := next, &nextIDs, &nextTime
				if (i+round)%2 == 1 {
					f, ids, took = incr, &incrIDs, &incrTime
				}
				n, d := block(b, goroutines, 50*time.Millisecond, f)
				*ids += n
				*took += d
				rate[(i+round)%2] = float64(n) / d.Seconds()
			}
			ratios = append(ratios, rate[0]/rate[1])
			round++
		}
		sort.Float64s(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "Next/INCR")
		b.ReportMetric(float64(nextIDs)/nextTime.Seconds(), "Next-ids/s")
		b.ReportMetric(float64(incrIDs)/incrTime.Seconds(), "INCR-ids/s")
	}
	b.Run("Alternating", func(b *testing.B) { alternate(b, 1) })
	b.Run("Alternating-parallel64", func(b *testing.B) { alternate(b, 64) })
	b.Run("NextN1000", func(b *testing.B) {
		g := newG(b)
		buf := make([]flurry.ID, 1000)
		var ids atomic.Int64
		b.ReportAllocs()
		for b.Loop() {
			n, err := g.NextN(ctx, buf)
			if err != nil {
				b.Fatal(err)
			}
			ids.Add(int64(n))
		}
		sinkID = buf[0]
		idsPerSec(b, ids.Load())
		b.ReportMetric(float64(ids.Load())/float64(b.N), "ids/call")
	})
}

// block calls f from goroutines goroutines for d and returns how many calls
// succeeded and how long they took, to the last call's end.
func block(b *testing.B, goroutines int, d time.Duration, f func() error) (int64, time.Duration) {
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range goroutines {
		wg.Go(func() {
			for time.Now().Before(end) {
				if err := f(); err != nil {
					b.Error(err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return n.Load(), time.Since(start)
}
