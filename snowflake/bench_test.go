package snowflake

import (
	"sync"
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
				g, err := newGenerator(Options{Layout: l, Clock: c, Namespace: b.Name()}, defaultContention, managed)
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
			g, err := newGenerator(Options{Layout: l, Node: layout.NodeValues{1}, Namespace: b.Name()}, c, false)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var local flurry.ID
				for pb.Next() {
					id, err := g.Next(bg)
					if err != nil {
						b.Error(err)
						return
					}
					local = id
				}
				sinkMu.Lock()
				sinkID = local
				sinkMu.Unlock()
			})
		})
	}
}
