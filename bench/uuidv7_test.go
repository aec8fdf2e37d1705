package bench

import (
	"testing"
	"time"

	"github.com/flurryid/flurry/uuidv7"
	"github.com/google/uuid"
)

// flurry's uuidv7 package next to google/uuid's NewV7. Both fill rand_a with the
// sub-millisecond time and count up in it when the clock has not moved, so both run
// ahead of the clock above about 4 million IDs per second; google/uuid without a
// bound, flurry up to Options.MaxDrift (1 s by default) and then at the clock's pace.
//
//   - flurry: MaxDrift one hour, so the loop measures the cost of Next, as google/uuid's
//     unbounded counter lets it.
//   - flurry-default: Options{}; after 1 s ahead, a tight loop is held to 4,096 IDs
//     per ms (244 ns per ID).
//   - google: uuid.NewV7, one crypto/rand read of 16 bytes per ID.
//   - google-randpool: uuid.NewV7 after uuid.EnableRandPool (a process-wide switch;
//     buffers crypto/rand).
//
// ahead-ms is how far the last ID's time stands ahead of the wall clock at the end.

var (
	sinkFlurryUUID uuidv7.UUID
	sinkGoogleUUID uuid.UUID
	sinkUUIDStr    string
)

const uuidv7Text = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f" // RFC 9562 Appendix A.6

func newUUIDv7(tb testing.TB, drift time.Duration) *uuidv7.Generator {
	tb.Helper()
	g, err := uuidv7.New(uuidv7.Options{MaxDrift: drift})
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func reportAheadMs(b *testing.B, ms int64) {
	b.ReportMetric(float64(ms-time.Now().UnixMilli()), "ahead-ms")
}

func BenchmarkUUIDv7(b *testing.B) {
	for _, bc := range []struct {
		name  string
		drift time.Duration
	}{{"flurry", time.Hour}, {"flurry-default", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			g := newUUIDv7(b, bc.drift)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				u, err := g.Next(bg)
				if err != nil {
					b.Fatal(err)
				}
				sinkFlurryUUID = u
			}
			b.StopTimer()
			reportAheadMs(b, sinkFlurryUUID.UnixMilli())
		})
	}
	google := func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sinkGoogleUUID = u
		}
		b.StopTimer()
		sec, nsec := sinkGoogleUUID.Time().UnixTime()
		reportAheadMs(b, sec*1000+nsec/1e6)
	}
	b.Run("google", google)
	b.Run("google-randpool", func(b *testing.B) {
		uuid.EnableRandPool()
		defer uuid.DisableRandPool()
		google(b)
	})
}

// BenchmarkUUIDv7Parallel: GOMAXPROCS goroutines on one generator (flurry, MaxDrift
// one hour) or on google/uuid's process-wide state; ns/op is wall time per ID.
func BenchmarkUUIDv7Parallel(b *testing.B) {
	b.Run("flurry", func(b *testing.B) {
		g := newUUIDv7(b, time.Hour)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var local uuidv7.UUID
			for pb.Next() {
				u, err := g.Next(bg)
				if err != nil {
					b.Error(err)
					return
				}
				local = u
			}
			publish(local)
		})
	})
	google := func(b *testing.B) {
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
	}
	b.Run("google", google)
	b.Run("google-randpool", func(b *testing.B) {
		uuid.EnableRandPool()
		defer uuid.DisableRandPool()
		google(b)
	})
}

// BenchmarkUUIDv7Batch is flurry's NextN of 1000 into a reused slice (google/uuid
// has no batch call); ns/id is per ID.
func BenchmarkUUIDv7Batch(b *testing.B) {
	g := newUUIDv7(b, time.Hour)
	ids := make([]uuidv7.UUID, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := g.NextN(bg, ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/id")
}

// BenchmarkUUIDv7Text is String and Parse of the canonical form.
func BenchmarkUUIDv7Text(b *testing.B) {
	fu, _ := uuidv7.Parse(uuidv7Text)
	gu := uuid.MustParse(uuidv7Text)
	b.Run("string/flurry", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkUUIDStr = fu.String()
		}
	})
	b.Run("string/google", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkUUIDStr = gu.String()
		}
	})
	b.Run("parse/flurry", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkFlurryUUID, _ = uuidv7.Parse(uuidv7Text)
		}
	})
	b.Run("parse/google", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sinkGoogleUUID, _ = uuid.Parse(uuidv7Text)
		}
	})
}

// TestUUIDv7Interop checks that google/uuid reads flurry's UUIDs as version 7 of the
// RFC variant with the same bytes and time, and that flurry reads google/uuid's.
func TestUUIDv7Interop(t *testing.T) {
	g := newUUIDv7(t, 0)
	ids := make([]uuidv7.UUID, sanityN)
	if _, err := g.NextN(bg, ids); err != nil {
		t.Fatal(err)
	}
	for i, u := range ids {
		gu, err := uuid.Parse(u.String())
		if err != nil || gu.Version() != 7 || gu.Variant() != uuid.RFC4122 || [16]byte(gu) != [16]byte(u) {
			t.Fatalf("google/uuid reads %v as %v (version %d, %v), %v", u, gu, gu.Version(), gu.Variant(), err)
		}
		sec, nsec := gu.Time().UnixTime()
		if ms := sec*1000 + nsec/1e6; ms != u.UnixMilli() {
			t.Fatalf("google/uuid reads time %d ms from %v, flurry %d", ms, u, u.UnixMilli())
		}
		if i > 0 && u.Compare(ids[i-1]) != 1 {
			t.Fatalf("%v after %v", u, ids[i-1])
		}
	}
	near(t, "flurry uuidv7", ids[0].UnixMilli())
	for range 100 {
		gu := uuid.Must(uuid.NewV7())
		u, err := uuidv7.Parse(gu.String())
		if err != nil || [16]byte(u) != [16]byte(gu) {
			t.Fatalf("flurry reads %v as %v, %v", gu, u, err)
		}
	}
}
