package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/snowflake"
)

// A read of the system clock costs about as much as everything else an ID costs
// (tens of nanoseconds on a KVM guest), and its cost moves from one boot to the
// next, so a comparison of two generators on the system clock is mostly a
// comparison of two clock reads. BenchmarkPathCost takes the clock out: flurry's
// default generator and bwmarrin/snowflake's algorithm each read the same constant
// clock (a clock.Fake that moves only when a tick's sequence runs out), through the
// same clock.Clock interface, so what is left is each one's own work per ID: the
// synchronisation between callers and the composition of the ID.

// bwAlgo is bwmarrin/snowflake v0.3.0's Node.Generate restated over a clock.Clock:
// a measurement rig for BenchmarkPathCost, not product code, and not a generator
// anyone should use. The steps are bwmarrin's (under a mutex: read the clock in
// milliseconds since the epoch; in the same millisecond, the next step, masked;
// else step 0; compose time, node and step), with one change: when a
// millisecond's steps run out, bwmarrin spins on the clock until it moves, which
// a constant clock never does, so this sleeps on the clock until the next
// millisecond (a clock.Fake moves there at once). That happens once per 2^21 IDs.
type bwAlgo struct {
	mu        sync.Mutex
	clk       clock.Clock
	epochNs   int64
	time      int64
	node      int64
	step      int64
	stepMask  int64
	timeShift uint8
	nodeShift uint8
}

// newBwAlgo is configured as bwNode22: 1 node bit, 21 step bits, the 22-bit
// layout's epoch, node 1.
func newBwAlgo(clk clock.Clock) *bwAlgo {
	const nodeBits, stepBits = 1, 21
	return &bwAlgo{
		clk:       clk,
		epochNs:   epoch22Ms * int64(time.Millisecond),
		node:      1,
		stepMask:  -1 ^ (-1 << stepBits),
		timeShift: nodeBits + stepBits,
		nodeShift: stepBits,
	}
}

func (n *bwAlgo) Generate() int64 {
	n.mu.Lock()
	now := (n.clk.Now() - n.epochNs) / 1000000
	if now == n.time {
		n.step = (n.step + 1) & n.stepMask
		if n.step == 0 {
			for now <= n.time {
				_ = n.clk.SleepUntil(context.Background(), n.epochNs+(n.time+1)*1000000)
				now = (n.clk.Now() - n.epochNs) / 1000000
			}
		}
	} else {
		n.step = 0
	}
	n.time = now
	r := now<<n.timeShift | n.node<<n.nodeShift | n.step
	n.mu.Unlock()
	return r
}

// constantClock returns a clock.Fake standing at the present.
func constantClock() *clock.Fake { return clock.NewFake(time.Now()) }

// BenchmarkPathCost is one ID, serial, with the clock a constant: flurry's
// generator (snowflake.New's defaults on the 22-bit layout, Options.Clock the
// constant clock) against bwAlgo on its own constant clock.
func BenchmarkPathCost(b *testing.B) {
	b.Run("flurry", func(b *testing.B) {
		g := newFlurry(b, layout22, false, snowflake.Options{Clock: constantClock()})
		b.ReportAllocs()
		b.ResetTimer()
		if err := pathCostFlurry(g, b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("bwmarrin", func(b *testing.B) {
		n := newBwAlgo(constantClock())
		b.ReportAllocs()
		b.ResetTimer()
		pathCostBw(n, b.N)
	})
}

// pathCostFlurry and pathCostBw are BenchmarkPathCost's loops, outside the
// benchmark's function so that neither keeps b live across its calls (b.Fatal
// inside the loop costs a reload of b per ID): each loop's own instructions are
// the other's, plus the context and the error test of flurry's API.
func pathCostFlurry(g *snowflake.Generator, n int) error {
	for range n {
		id, err := g.Next(bg)
		if err != nil {
			return err
		}
		sinkID = id
	}
	return nil
}

func pathCostBw(bw *bwAlgo, n int) {
	for range n {
		sinkI64 = bw.Generate()
	}
}

// BenchmarkPathCostParallel is BenchmarkPathCost from GOMAXPROCS goroutines
// sharing one generator; ns/op is wall time per ID.
func BenchmarkPathCostParallel(b *testing.B) {
	b.Run("flurry", func(b *testing.B) {
		g := newFlurry(b, layout22, false, snowflake.Options{Clock: constantClock()})
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
			publish(local)
		})
	})
	b.Run("bwmarrin", func(b *testing.B) {
		n := newBwAlgo(constantClock())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var local int64
			for pb.Next() {
				local = n.Generate()
			}
			publish(local)
		})
	})
}

// TestBwAlgo checks the rig against bwmarrin's own node: the same fields in the
// same places, steps that increase inside a millisecond, and a millisecond that
// runs out moving to the next one on the constant clock instead of spinning.
func TestBwAlgo(t *testing.T) {
	f := constantClock()
	n := newBwAlgo(f)
	wantMs := (f.Now() - n.epochNs) / int64(time.Millisecond)
	first := n.Generate()
	peer := int64(bwNode22.Generate())
	for _, id := range []int64{first, peer} {
		if ms := id >> 22; ms < wantMs-1000 || ms > wantMs+1000 {
			t.Fatalf("ID %d: %d ms since the epoch, want about %d", id, ms, wantMs)
		}
		if node := id >> 21 & 1; node != 1 {
			t.Fatalf("ID %d: node %d, want 1", id, node)
		}
	}
	last := first
	for i := 1; i < 1<<21+10; i++ {
		id := n.Generate()
		if id <= last {
			t.Fatalf("ID %d after %d", id, last)
		}
		last = id
	}
	if ms := last >> 22; ms != wantMs+1 {
		t.Fatalf("after 2^21+10 IDs on a constant clock: %d ms, want %d", ms, wantMs+1)
	}
}
