package uuidv7

import (
	"testing"
	"time"
)

var (
	sinkUUID UUID
	sinkStr  string
)

// BenchmarkNext is the serial cost of one ID. "default" is Options{}: a tight loop
// asks for more than 4,096 IDs per millisecond, so after running 1 s ahead of the
// clock it is held to that rate (244 ns per ID on average); "unbounded" sets MaxDrift
// to an hour so that the loop measures the cost of Next alone. ahead-ms is how far
// the last ID's time is ahead of the wall clock at the end.
func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct {
		name  string
		drift time.Duration
	}{{"default", 0}, {"unbounded", time.Hour}} {
		b.Run(bc.name, func(b *testing.B) {
			g := newGen(b, Options{MaxDrift: bc.drift})
			b.ReportAllocs()
			for b.Loop() {
				u, err := g.Next(bg)
				if err != nil {
					b.Fatal(err)
				}
				sinkUUID = u
			}
			b.ReportMetric(float64(sinkUUID.UnixMilli()-time.Now().UnixMilli()), "ahead-ms")
		})
	}
}

// BenchmarkNextParallel is Next from GOMAXPROCS goroutines on one generator
// (MaxDrift an hour); ns/op is wall time per ID.
func BenchmarkNextParallel(b *testing.B) {
	g := newGen(b, Options{MaxDrift: time.Hour})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var u UUID
		for pb.Next() {
			u, _ = g.Next(bg)
		}
		_ = u
	})
}

// BenchmarkNextN is a batch of 1000 into a reused slice; ns/op is per batch and
// ns/id per ID.
func BenchmarkNextN(b *testing.B) {
	g := newGen(b, Options{MaxDrift: time.Hour})
	ids := make([]UUID, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.NextN(bg, ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/id")
}

func BenchmarkString(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkStr = rfcBytes.String()
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		u, err := Parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
		if err != nil {
			b.Fatal(err)
		}
		sinkUUID = u
	}
}
