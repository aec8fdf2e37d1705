package bench

import (
	"testing"

	bwsnow "github.com/bwmarrin/snowflake"
	"github.com/yitter/idgenerator-go/idgen"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
)

// Every implementation is called directly in its own loop (no interface or func
// value in between), so the numbers are the libraries' own costs.

// BenchmarkNext is the serial cost of one ID on a layout with a 22-bit sequence,
// where the per-node cap (4,194,304 IDs per ms) never binds.
func BenchmarkNext(b *testing.B) {
	b.Run("flurry", func(b *testing.B) { serialFlurry(b, layout22, false) })
	b.Run("flurry-coarse", func(b *testing.B) { serialFlurry(b, layout22, true) })
	b.Run("flurry-lanes", func(b *testing.B) {
		g := newFlurry(b, layout22, false, snowflake.Options{Lanes: lanesFor()})
		lane := g.Lane()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			id, err := lane.Next(bg)
			if err != nil {
				b.Fatal(err)
			}
			sinkID = id
		}
	})
	b.Run("bwmarrin", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkBW = bwNode22.Generate()
		}
	})
	b.Run("sonyflake", func(b *testing.B) {
		sf := newSonyflake(b, 22, 1, 1e6, epoch22Ms)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			id, err := sf.NextID()
			if err != nil {
				b.Fatal(err)
			}
			sinkI64 = id
		}
	})
	b.Run("yitter", func(b *testing.B) {
		y := newYitter(1, 1, 21, epoch22Ms)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkI64 = y.NewLong()
		}
	})
	b.Run("xid", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkXID = xid.New()
		}
	})
	b.Run("uuidv7", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sinkUUID = u
		}
	})
	b.Run("ulid", func(b *testing.B) {
		// ulid.Make: the package's default entropy, a math/rand source wrapped in a
		// LockedMonotonicReader (monotonic within a millisecond, behind a mutex).
		b.ReportAllocs()
		for range b.N {
			sinkULID = ulid.Make()
		}
	})
}

func serialFlurry(b *testing.B, l *layout.Layout, coarse bool) {
	g := newFlurry(b, l, coarse, snowflake.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		id, err := g.Next(bg)
		if err != nil {
			b.Fatal(err)
		}
		sinkID = id
	}
}

// BenchmarkNextParallel is BenchmarkNext from GOMAXPROCS goroutines sharing one
// generator. ns/op is wall-clock time per ID over all goroutines.
func BenchmarkNextParallel(b *testing.B) {
	b.Run("flurry", func(b *testing.B) { parallelFlurry(b, layout22, false) })
	b.Run("flurry-coarse", func(b *testing.B) { parallelFlurry(b, layout22, true) })
	b.Run("flurry-lanes", func(b *testing.B) { parallelLanes(b, layout22, false) })
	b.Run("flurry-lanes-coarse", func(b *testing.B) { parallelLanes(b, layout22, true) })
	b.Run("bwmarrin", func(b *testing.B) { parallelBwmarrin(b, bwNode22) })
	b.Run("sonyflake", func(b *testing.B) {
		sf := newSonyflake(b, 22, 1, 1e6, epoch22Ms)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var local int64
			for pb.Next() {
				id, err := sf.NextID()
				if err != nil {
					b.Error(err)
					return
				}
				local = id
			}
			publish(local)
		})
	})
	b.Run("yitter", func(b *testing.B) { parallelYitter(b, newYitter(1, 1, 21, epoch22Ms)) })
	b.Run("xid", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var local xid.ID
			for pb.Next() {
				local = xid.New()
			}
			publish(local)
		})
	})
	b.Run("uuidv7", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var local uuid.UUID
			for pb.Next() {
				u, err := uuid.NewV7()
				if err != nil {
					b.Error(err)
					return
				}
				local = u
			}
			publish(local)
		})
	})
	b.Run("ulid", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var local ulid.ULID
			for pb.Next() {
				local = ulid.Make()
			}
			publish(local)
		})
	})
}

func parallelFlurry(b *testing.B, l *layout.Layout, coarse bool) {
	g := newFlurry(b, l, coarse, snowflake.Options{})
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
}

// parallelLanes gives each RunParallel goroutine a Lane of its own.
func parallelLanes(b *testing.B, l *layout.Layout, coarse bool) {
	g := newFlurry(b, l, coarse, snowflake.Options{Lanes: lanesFor()})
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		lane := g.Lane()
		var local flurry.ID
		for pb.Next() {
			id, err := lane.Next(bg)
			if err != nil {
				b.Error(err)
				return
			}
			local = id
		}
		publish(local)
	})
}

// BenchmarkTwitterLayout uses the twitter layout (41-bit ms time, 10 node bits,
// 12-bit sequence): the cap of 4096 IDs per ms (244 ns per ID) binds, so this
// shows what each library does at its cap: flurry sleeps to the next tick (Wait),
// bwmarrin spins, yitter method 1 borrows future milliseconds, method 2 sleeps
// 1 ms at a time.
func BenchmarkTwitterLayout(b *testing.B) {
	b.Run("flurry", func(b *testing.B) { serialFlurry(b, layoutTw, false) })
	b.Run("flurry-coarse", func(b *testing.B) { serialFlurry(b, layoutTw, true) })
	b.Run("bwmarrin", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkBW = bwNodeTw.Generate()
		}
	})
	b.Run("yitter", func(b *testing.B) {
		y := newYitter(1, 10, 12, twitterEpochMs)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkI64 = y.NewLong()
		}
	})
	b.Run("yitter-m2", func(b *testing.B) {
		y := newYitter(2, 10, 12, twitterEpochMs)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkI64 = y.NewLong()
		}
	})
	b.Run("parallel/flurry", func(b *testing.B) { parallelFlurry(b, layoutTw, false) })
	b.Run("parallel/bwmarrin", func(b *testing.B) { parallelBwmarrin(b, bwNodeTw) })
	b.Run("parallel/yitter", func(b *testing.B) { parallelYitter(b, newYitter(1, 10, 12, twitterEpochMs)) })
}

func parallelBwmarrin(b *testing.B, n *bwsnow.Node) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var local bwsnow.ID
		for pb.Next() {
			local = n.Generate()
		}
		publish(local)
	})
}

func parallelYitter(b *testing.B, y *idgen.DefaultIdGenerator) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var local int64
		for pb.Next() {
			local = y.NewLong()
		}
		publish(local)
	})
}
