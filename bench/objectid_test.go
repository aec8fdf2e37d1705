package bench

import (
	"testing"
	"time"

	"github.com/flurryid/flurry/objectid"
)

// flurry's objectid package on its own (no MongoDB driver dependency here). The
// generator takes a mutex per call; its cap is 16,777,216 IDs per second.

var (
	sinkObjectID    objectid.ID
	sinkObjectIDStr string
)

const objectIDText = "507f1f77bcf86cd799439011"

func newObjectID(tb testing.TB) *objectid.Generator {
	tb.Helper()
	g, err := objectid.New(objectid.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func BenchmarkObjectID(b *testing.B) {
	b.Run("next", func(b *testing.B) {
		g := newObjectID(b)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			id, err := g.Next(bg)
			if err != nil {
				b.Fatal(err)
			}
			sinkObjectID = id
		}
	})
	b.Run("next-parallel", func(b *testing.B) {
		g := newObjectID(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var local objectid.ID
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
	b.Run("batch", func(b *testing.B) {
		g := newObjectID(b)
		ids := make([]objectid.ID, 1000)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := g.NextN(bg, ids); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/id")
	})
	b.Run("string", func(b *testing.B) {
		id, _ := objectid.Parse(objectIDText)
		b.ReportAllocs()
		for range b.N {
			sinkObjectIDStr = id.String()
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkObjectID, _ = objectid.Parse(objectIDText)
		}
	})
}

// TestObjectIDSanity checks the known ObjectId of MongoDB's documentation and that a
// generator's IDs carry the time, its random value and consecutive counters.
func TestObjectIDSanity(t *testing.T) {
	id, err := objectid.Parse(objectIDText)
	if err != nil || !id.Time().Equal(time.Date(2012, 10, 17, 21, 13, 27, 0, time.UTC)) || id.Counter() != 0x439011 {
		t.Fatalf("%v: %v, counter %#x, %v", id, id.Time(), id.Counter(), err)
	}
	g := newObjectID(t)
	ids := make([]objectid.ID, sanityN)
	if _, err := g.NextN(bg, ids); err != nil {
		t.Fatal(err)
	}
	near(t, "objectid", ids[0].Unix()*1000)
	for i, id := range ids {
		if id.Random() != g.Random() || i > 0 && id.Counter() != (ids[i-1].Counter()+1)&0xffffff {
			t.Fatalf("ID %d: %v after %v", i, id, ids[i-1])
		}
	}
}
