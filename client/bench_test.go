package client

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkNext measures Next to one goroutine against an in-process server,
// refills included (they run in the background, on another core when there is
// one). ns/op is the cost of one ID.
func BenchmarkNext(b *testing.B) {
	for _, batch := range []int{1000, 10_000, 100_000} {
		for _, tr := range []Transport{HTTP, GRPC} {
			b.Run(fmt.Sprintf("%s/batch=%d", tr, batch), func(b *testing.B) {
				s := newTestServer(b)
				c := newTestClient(b, Options{Transport: tr, Batch: batch}, s)
				ns := c.Namespace("default")
				ctx := context.Background()
				if _, err := ns.Next(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					id, err := ns.Next(ctx)
					if err != nil {
						b.Fatal(err)
					}
					sink = id
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IDs/s")
			})
		}
	}
}

// BenchmarkNextBuffered is the hot path alone: the timer runs only while IDs are
// buffered, and refills (no prefetch) happen with the timer stopped.
func BenchmarkNextBuffered(b *testing.B) {
	s := newTestServer(b)
	c := newTestClient(b, Options{Batch: 100_000, LowWater: -1}, s)
	ctx := context.Background()
	ns := c.Namespace("default")
	b.ReportAllocs()
	b.StopTimer()
	for done := 0; done < b.N; {
		if _, err := ns.Next(ctx); err != nil { // refills an empty buffer
			b.Fatal(err)
		}
		done++
		n := min(b.N-done, ns.Buffered())
		b.StartTimer()
		for range n {
			id, err := ns.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
		b.StopTimer()
		done += n
	}
}

// BenchmarkNextParallel is Next from GOMAXPROCS goroutines sharing one namespace.
func BenchmarkNextParallel(b *testing.B) {
	s := newTestServer(b)
	c := newTestClient(b, Options{Batch: 100_000}, s)
	ns := c.Namespace("default")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var local int64
		for pb.Next() {
			id, err := ns.Next(context.Background())
			if err != nil {
				b.Error(err)
				return
			}
			local += int64(id)
		}
		_ = local
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IDs/s")
}
