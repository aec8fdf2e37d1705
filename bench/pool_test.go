package bench

import (
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/snowflake"
)

const poolSize = 8192

// refillFull brings the pool back to size IDs. The refiller wakes only when a take
// leaves the pool below LowWater (default size/2), and a burst can end above it with
// the refiller already asleep (it topped up during the burst), so first drain the
// pool below LowWater (those IDs are dropped), then poll until it is full.
func refillFull(b *testing.B, p *snowflake.Pool, size int) {
	for p.Level() >= size/2 {
		if _, err := p.Next(bg); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Level() < size {
		if time.Now().After(deadline) {
			b.Fatalf("pool level %d after 5 s, want %d (stats %+v)", p.Level(), size, p.Stats())
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// BenchmarkPoolBurst takes 8192 IDs from a full pool of 8192 (22-bit layout,
// system clock, default PoolOptions) in one burst per op; bringing the pool back to
// full between bursts is not timed.
// ns/op is per burst of 8192, ns/id per ID.
func BenchmarkPoolBurst(b *testing.B) {
	g := newFlurry(b, layout22, false, snowflake.Options{})
	p, err := snowflake.NewPool(g, snowflake.PoolOptions{Size: poolSize})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() }) // runs before g's Close (cleanups run last-in first-out)
	b.ReportAllocs()
	b.StopTimer()
	var last flurry.ID
	for range b.N {
		refillFull(b, p, poolSize)
		b.StartTimer()
		for range poolSize {
			id, err := p.Next(bg)
			if err != nil {
				b.Fatal(err)
			}
			last = id
		}
		b.StopTimer()
	}
	sinkID = last
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*poolSize), "ns/id")
	st := p.Stats()
	b.ReportMetric(float64(st.Direct), "direct")
}

// BenchmarkBatch is NextN of 1000 IDs into a reused slice, on the 22-bit layout.
// ns/op is per batch of 1000, ns/id per ID.
func BenchmarkBatch(b *testing.B) {
	for _, coarse := range []bool{false, true} {
		name := "flurry"
		if coarse {
			name = "flurry-coarse"
		}
		b.Run(name, func(b *testing.B) {
			g := newFlurry(b, layout22, coarse, snowflake.Options{})
			dst := make([]flurry.ID, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			total := 0
			for range b.N {
				n, err := g.NextN(bg, dst)
				if err != nil {
					b.Fatal(err)
				}
				total += n
			}
			b.StopTimer()
			sinkID = dst[len(dst)-1]
			if total != b.N*len(dst) {
				b.Fatalf("NextN filled %d of %d", total, b.N*len(dst))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/id")
		})
	}
}
