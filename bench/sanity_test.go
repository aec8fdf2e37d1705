package bench

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/snowflake"
	"github.com/google/uuid"
)

// These tests check that every implementation is configured as the benchmarks
// claim: the bit widths, epochs and time decoding used to compare them.

const sanityN = 20000

func near(t *testing.T, name string, ms int64) {
	t.Helper()
	if d := time.Since(time.UnixMilli(ms)); d < -time.Second || d > time.Second {
		t.Errorf("%s: ID time %v is %v away from now", name, time.UnixMilli(ms).UTC(), d)
	}
}

func increasing(t *testing.T, name string, ids []int64) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("%s: ID %d (%d) is not larger than ID %d (%d)", name, i, ids[i], i-1, ids[i-1])
		}
	}
}

func collect(n int, next func() int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = next()
	}
	return ids
}

func TestLayouts(t *testing.T) {
	if got := layout22.MaxSequence() + 1; got != 1<<22 {
		t.Errorf("layout22 has %d sequence values, want 2^22", got)
	}
	// 1 worker bit + 22 sequence bits below the time field, as sonyflake's 22/1;
	// bwmarrin and yitter allow at most 22 bits there, so they get 21 + 1.
	if got := layout22.Bits() - layout22.Fields()[0].Bits; got != 23 {
		t.Errorf("layout22 has %d bits below the time field, want 23", got)
	}
	if got := layout22.Epoch().UnixMilli(); got != epoch22Ms {
		t.Errorf("layout22 epoch %d", got)
	}
	if got := layoutTw.Rate(); got != twitterCap {
		t.Errorf("twitter layout cap %v per s, want %v", got, twitterCap)
	}
	if got := layoutTw.Epoch().UnixMilli(); got != twitterEpochMs {
		t.Errorf("twitter epoch %d", got)
	}
}

func TestPeers(t *testing.T) {
	// bwmarrin and yitter put their time field at bit 22, sonyflake 22/1 at bit 23.
	check := func(name string, baseMs int64, ids []int64) {
		t.Helper()
		increasing(t, name, ids)
		shift := 22
		if name == "sonyflake-22" {
			shift = 23
		}
		near(t, name, ids[len(ids)-1]>>shift+baseMs)
	}
	check("bwmarrin-22", epoch22Ms, collect(sanityN, func() int64 { return int64(bwNode22.Generate()) }))
	check("bwmarrin-twitter", twitterEpochMs, collect(sanityN, func() int64 { return int64(bwNodeTw.Generate()) }))
	check("yitter-22", epoch22Ms, collect(sanityN, newYitter(1, 1, 21, epoch22Ms).NewLong))
	check("yitter-twitter", twitterEpochMs, collect(sanityN, newYitter(1, 10, 12, twitterEpochMs).NewLong))
	check("yitter-m2-twitter", twitterEpochMs, collect(sanityN, newYitter(2, 10, 12, twitterEpochMs).NewLong))
	sf := newSonyflake(t, 22, 1, time.Millisecond, epoch22Ms)
	check("sonyflake-22", epoch22Ms, collect(sanityN, func() int64 {
		id, err := sf.NextID()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}))
	u, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	near(t, "uuidv7", int64(binary.BigEndian.Uint64(u[:8])>>16))
}

func TestFlurry(t *testing.T) {
	check := func(name string, ids []flurry.ID) {
		t.Helper()
		raw := make([]int64, len(ids))
		for i, id := range ids {
			raw[i] = int64(id)
		}
		increasing(t, name, raw)
		near(t, name, layout22.TimeOf(ids[len(ids)-1]).UnixMilli())
	}
	next := func(f func() (flurry.ID, error)) []flurry.ID {
		t.Helper()
		ids := make([]flurry.ID, sanityN)
		for i := range ids {
			id, err := f()
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = id
		}
		return ids
	}
	for _, coarse := range []bool{false, true} {
		g := newFlurry(t, layout22, coarse, snowflake.Options{})
		check("flurry", next(func() (flurry.ID, error) { return g.Next(bg) }))
		dst := make([]flurry.ID, sanityN)
		if n, err := g.NextN(bg, dst); n != len(dst) || err != nil {
			t.Fatalf("NextN = %d, %v", n, err)
		}
		check("flurry NextN", dst)
	}

	g := newFlurry(t, layout22, false, snowflake.Options{})
	p, err := snowflake.NewPool(g, snowflake.PoolOptions{Size: poolSize})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	check("flurry pool", next(func() (flurry.ID, error) { return p.Next(bg) }))

	// Lanes: each goroutine's IDs increase; together they are unique.
	g = newFlurry(t, layout22, false, snowflake.Options{Lanes: lanesFor()})
	var mu sync.Mutex
	seen := map[flurry.ID]bool{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		lane := g.Lane()
		go func() {
			defer wg.Done()
			ids := make([]flurry.ID, sanityN)
			for i := range ids {
				id, err := lane.Next(bg)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = id
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] {
					t.Errorf("lanes issued %d twice", id)
					return
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()

	// Borrow on the twitter layout: issuing 3x a tick's worth at once runs ahead.
	gb := newFlurry(t, layoutTw, false, snowflake.Options{Overflow: snowflake.Borrow, MaxDrift: borrowMaxDrift})
	dst := make([]flurry.ID, 3*4096)
	if n, err := gb.NextN(bg, dst); n != len(dst) || err != nil {
		t.Fatalf("borrow NextN = %d, %v", n, err)
	}
	if st := gb.Stats(); st.MaxDriftSeen > borrowMaxDrift {
		t.Errorf("MaxDriftSeen %v beyond MaxDrift %v", st.MaxDriftSeen, borrowMaxDrift)
	}
}
