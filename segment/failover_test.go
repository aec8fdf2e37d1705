package segment_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
)

// gate passes calls to a real store, counts the Takes, and fails Take and Tags at
// once while down is set: a store that refuses.
type gate struct {
	segment.Store
	down  atomic.Bool
	takes atomic.Int64
}

var errGateDown = errors.New("gate: store down")

func (g *gate) Take(ctx context.Context, tag string, n, floor, limit int64) (segment.Block, error) {
	g.takes.Add(1)
	if g.down.Load() {
		return segment.Block{}, errGateDown
	}
	return g.Store.Take(ctx, tag, n, floor, limit)
}

func (g *gate) Tags(ctx context.Context) ([]segment.Tag, error) {
	if g.down.Load() {
		return nil, errGateDown
	}
	return g.Store.Tags(ctx)
}

// served checks one allocator's IDs: strictly increasing, every ID in the residue
// class of a store (of two), and returns how many came from store 1 (odd IDs).
func served(t *testing.T, what string, ids []flurry.ID) (odd int) {
	t.Helper()
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("%s: ID %d after %d from one allocator", what, id, ids[i-1])
		}
		odd += int(id % 2)
	}
	return odd
}

// TestHangingStoreFailsOver: with PostgreSQL (residue class 0) behind a proxy that
// stops forwarding, each allocator waits out one FetchTimeout on it, once, then
// serves from the healthy SQLite store (class 1) without a single error, and does not
// go back to the hanging store while the other answers. Before per-attempt deadlines
// the fetch spent its whole timeout on PostgreSQL and Next failed with ErrUnavailable
// for as long as it hung.
func TestHangingStoreFailsOver(t *testing.T) {
	raw, proxy := proxied(t)
	pg := &gate{Store: openURL(t, raw)}
	lite := &gate{Store: sqlite(t)}
	tag := newTag(t, 20, pg.Store, lite.Store)
	stores := []segment.Store{pg, lite}
	// SQLite refuses while the allocators start, so that both prefer PostgreSQL.
	lite.down.Store(true)
	opts := segment.Options{Stores: stores, Tag: tag, MaxStep: 40, FetchTimeout: time.Second, RetryMax: 50 * time.Millisecond}
	allocs := []*segment.Allocator{newAlloc(t, opts), newAlloc(t, opts)}
	ids := make([][]flurry.ID, len(allocs))
	take := func(n int, phase string) {
		for i := 0; i < n; i++ {
			for j, a := range allocs {
				// No error at all: a fetch waits out the hanging store within its
				// deadline and moves on. The bound only keeps a broken build from
				// hanging the test.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				id, err := a.Next(ctx)
				cancel()
				if err != nil {
					t.Fatalf("%s: allocator %d, Next %d: %v", phase, j, i, err)
				}
				ids[j] = append(ids[j], id)
			}
		}
	}
	take(200, "PostgreSQL only")
	for j := range allocs {
		if odd := served(t, "start", ids[j]); odd != 0 {
			t.Fatalf("allocator %d served %d odd IDs while SQLite refused", j, odd)
		}
	}
	lite.down.Store(false)

	proxy.Hang()
	before := pg.takes.Load()
	mark := []int{len(ids[0]), len(ids[1])}
	take(3000, "PostgreSQL hanging")
	if n := pg.takes.Load() - before; n > int64(len(allocs)) {
		t.Fatalf("%d takes from the hanging store, want at most one per allocator: the store that answered is tried first", n)
	}
	for j := range allocs {
		after := ids[j][mark[j]:]
		odd := served(t, "hang", after)
		if odd == 0 {
			t.Fatalf("allocator %d never moved to SQLite", j)
		}
		// Once on SQLite, every ID is odd: no range from PostgreSQL in between.
		first := 0
		for after[first]%2 == 0 {
			first++
		}
		if odd != len(after)-first {
			t.Fatalf("allocator %d: %d odd IDs of %d after the move to SQLite", j, odd, len(after)-first)
		}
	}

	// PostgreSQL comes back and SQLite refuses: the allocators move back.
	proxy.Restore()
	lite.down.Store(true)
	take(1000, "SQLite refusing")
	seen := map[flurry.ID]bool{}
	for j := range allocs {
		served(t, "whole run", ids[j])
		if last := ids[j][len(ids[j])-1]; last%2 != 0 {
			t.Fatalf("allocator %d still on SQLite (last ID %d) after it refused", j, last)
		}
		for _, id := range ids[j] {
			if seen[id] {
				t.Fatalf("ID %d served twice", id)
			}
			seen[id] = true
		}
	}
	lite.down.Store(false)
}
