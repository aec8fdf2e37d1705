package objectid

import "testing"

var (
	sinkID  ID
	sinkStr string
)

// BenchmarkNext is the serial cost of one ID. A loop faster than 60 ns per ID would
// reach the cap of 16,777,216 IDs per second and show its waits.
func BenchmarkNext(b *testing.B) {
	g := newGen(b, Options{})
	b.ReportAllocs()
	for b.Loop() {
		id, err := g.Next(bg)
		if err != nil {
			b.Fatal(err)
		}
		sinkID = id
	}
}

// BenchmarkNextParallel is Next from GOMAXPROCS goroutines on one generator; ns/op
// is wall time per ID.
func BenchmarkNextParallel(b *testing.B) {
	g := newGen(b, Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var id ID
		for pb.Next() {
			id, _ = g.Next(bg)
		}
		_ = id
	})
}

// BenchmarkNextN is a batch of 1000 into a reused slice; ns/id is per ID.
func BenchmarkNextN(b *testing.B) {
	g := newGen(b, Options{})
	ids := make([]ID, 1000)
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
		sinkStr = knownID.String()
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		id, err := Parse(known)
		if err != nil {
			b.Fatal(err)
		}
		sinkID = id
	}
}
