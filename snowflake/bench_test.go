package snowflake

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

var (
	sinkID flurry.ID
	sinkMu sync.Mutex
)

// BenchmarkManagedOverhead compares a bare generator with a Managed one holding a
// grant (the lease-backed path): the grant adds two atomic loads and compares.
// The layout has a 22-bit sequence so the per-tick cap does not interfere.
func BenchmarkManagedOverhead(b *testing.B) {
	l, _ := layout.Parse("time:40:1ms:2024-01-01T00:00:00Z,worker:1,seq:22")
	for _, clk := range []struct {
		name string
		c    func() clock.Clock
	}{
		{"system", func() clock.Clock { return clock.NewSystem() }},
		{"coarse", func() clock.Clock { return clock.NewCoarse(clock.NewSystem(), time.Millisecond) }},
	} {
		for _, managed := range []bool{false, true} {
			name := clk.name + "/bare"
			if managed {
				name = clk.name + "/managed"
			}
			b.Run(name, func(b *testing.B) {
				c := clk.c()
				if cc, ok := c.(*clock.Coarse); ok {
					defer cc.Close()
				}
				o := Options{Layout: l, Clock: c, Namespace: b.Name()}
				if managed {
					o.Fence = fence.New()
				}
				g, err := newGenerator(o, defaultContention)
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				if managed {
					far := time.Now().Add(time.Hour)
					g.grant(fence.Grant{Node: layout.NodeValues{1}, Through: far.UnixMilli(), Until: far.UnixNano()})
				}
				b.ReportAllocs()
				for b.Loop() {
					sinkID, _ = g.Next(bg)
				}
			})
		}
	}
}

// BenchmarkContention measures the contention variants on the system clock with a
// 22-bit sequence, from GOMAXPROCS goroutines sharing one generator: run it with
// -cpu 1,2 for the serial cost and the two-goroutine cost. ns/op is wall time per
// ID over all goroutines.
func BenchmarkContention(b *testing.B) {
	l, _ := layout.Parse("time:40:1ms:2024-01-01T00:00:00Z,worker:1,seq:22")
	for _, c := range variants {
		b.Run(c.String(), func(b *testing.B) {
			g, err := newGenerator(Options{Layout: l, Node: layout.NodeValues{1}, Namespace: b.Name()}, c)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			// A goroutine's next ID is its last plus step unless another goroutine
			// issued in between (or the tick changed): such a gap means the lane's
			// cache line went to another CPU and back. switches/kID counts them, a
			// figure the machine's load changes less than the time per ID.
			step := flurry.ID(1) << g.seqShift
			var gaps, ids atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var local flurry.ID
				var n, gap int64
				for pb.Next() {
					id, err := g.Next(bg)
					if err != nil {
						b.Error(err)
						return
					}
					if id != local+step {
						gap++
					}
					local = id
					n++
				}
				gaps.Add(gap)
				ids.Add(n)
				sinkMu.Lock()
				sinkID = local
				sinkMu.Unlock()
			})
			b.ReportMetric(1000*float64(gaps.Load())/float64(max(ids.Load(), 1)), "switches/kID")
		})
	}
}
