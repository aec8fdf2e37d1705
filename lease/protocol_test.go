package lease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
)

// The tests in this file hold the session and its generator to the two promises of
// the lease protocol, as a store and a caller can see them:
//
//   - the store's mark covers every ID issued: no ID is in a tick that starts after
//     the mark the store records for its value, at any moment (Lease.Mark);
//   - a new holder of a value starts strictly above every ID an earlier holder
//     issued with it, however that holder ended (release or expiry).
//
// They drive the generator to the very end of each reserved window, so that an ID in
// the last tick the session may issue in is checked against the store, and a takeover
// meets IDs in the very tick of the mark it starts above.

// protocolLayout has 4 IDs per 1 ms tick, so a generator that borrows future ticks
// reaches the end of a reservation window in a few hundred IDs.
const protocolLayout = "time:41:1ms:2020-01-01T00:00:00Z,worker:2,seq:2"

// protocolGen are generator options that issue ahead of a clock standing still, up
// to the end of the grant: Borrow takes the next tick when one is used up, Logical
// goes on above a mark the clock is behind, and MaxDrift is larger than any window the
// tests reserve, so the grant, not the drift, is what stops the generator.
func protocolGen(l *layout.Layout, clk clock.Clock, ns string) snowflake.Options {
	return snowflake.Options{Layout: l, Clock: clk, Namespace: ns, Overflow: snowflake.Borrow, Behind: snowflake.Logical, MaxDrift: 5 * time.Second}
}

// storeMark returns the mark st records for value of scope.
func storeMark(t *testing.T, st lease.Store, scope string, value int64) int64 {
	t.Helper()
	recs, err := st.List(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Value == value {
			return r.Mark
		}
	}
	t.Fatalf("the store has no record of value %d in scope %s: %+v", value, scope, recs)
	return 0
}

// drain issues IDs until the generator refuses with lease.ErrLost, which it must do
// at the end of its reserved window since its clock stands still, and returns them.
// Each ID must be above the one before. limit bounds the IDs a window can hold.
func drain(t *testing.T, g *snowflake.Generator, limit int) []flurry.ID {
	t.Helper()
	var ids []flurry.ID
	for len(ids) <= limit {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		id, err := g.Next(ctx)
		cancel()
		if errors.Is(err, lease.ErrLost) {
			if len(ids) == 0 {
				t.Fatalf("the generator refused at once: %v", err)
			}
			return ids
		}
		if err != nil {
			t.Fatalf("Next after %d IDs: %v", len(ids), err)
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			t.Fatalf("ID %d after %d", id, ids[len(ids)-1])
		}
		ids = append(ids, id)
	}
	t.Fatalf("%d IDs and the generator still issues with its clock standing still: its window has no end", len(ids))
	return nil
}

// checkCovered fails when an ID of ids is in a tick that starts after mark.
func checkCovered(t *testing.T, l *layout.Layout, ids []flurry.ID, mark int64, when string) {
	t.Helper()
	for _, id := range ids {
		if tick := l.TimeOf(id); tick.UnixMilli() > mark {
			t.Fatalf("%s: ID %d is in the tick at %v, after the store's mark %v: a holder taking the value now would start below it",
				when, id, tick, time.UnixMilli(mark).UTC())
		}
	}
}

// After the acquisition and after every renewal, the store's mark is at or above
// the tick of every ID the generator issued, the last tick of the window included.
func TestProtocolStoreMarkCoversIssuedIDs(t *testing.T) {
	l, err := layout.Parse(protocolLayout)
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]func(t *testing.T) lease.Store{
		"memstore": func(t *testing.T) lease.Store { return memstore.New(clock.NewManual(time.Now())) },
		"file":     func(t *testing.T) lease.Store { return store(t, t.TempDir()) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			defer st.Close()
			clk := clock.NewManual(time.Now())
			// Renewals every Window (100 ms: TTL/3 is longer), each reserving the budget
			// plus an interval, 200 ms,
			// ahead of the clock. The TTL is long so that the file store, which expires
			// leases by the real clock, keeps the lease however slow the machine.
			window := 100 * time.Millisecond
			g, s, err := lease.NewGenerator(context.Background(), protocolGen(l, clk, t.Name()),
				lease.Options{Store: st, Scope: leasetest.Scope(t), Budget: 100 * time.Millisecond, TTL: time.Minute, Window: window, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			defer s.Close()
			scope, value := s.Status().Scope, s.Status().Value
			limit := 4 * 1000 // a window of 200 ticks holds 800 IDs; far below a second's worth
			var all []flurry.ID
			for round := 0; round <= 3; round++ {
				if round > 0 {
					// Wake the session once it sleeps on the clock, and wait for the renewal.
					deadline := time.Now().Add(20 * time.Second)
					for clk.Sleepers() == 0 && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					clk.Add(window)
					for s.Status().Renewals < int64(round) && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					if n := s.Status().Renewals; n != int64(round) {
						t.Fatalf("after %d steps of the renewal interval: %d renewals", round, n)
					}
				}
				ids := drain(t, g, limit)
				if len(all) > 0 && ids[0] <= all[len(all)-1] {
					t.Fatalf("renewal %d: first ID %d not above the last before it %d", round, ids[0], all[len(all)-1])
				}
				all = append(all, ids...)
				when := "after the acquisition"
				if round > 0 {
					when = fmt.Sprintf("after renewal %d", round)
				}
				checkCovered(t, l, all, storeMark(t, st, scope, value), when)
			}
			if last := l.TimeOf(all[len(all)-1]); !last.After(clk.Time()) {
				t.Errorf("the last ID, at %v, is not ahead of the clock %v: the test did not reach the end of a window", last, clk.Time())
			}
		})
	}
}

// A new holder of a value starts strictly above every ID the previous holder issued,
// when that holder issued through the very tick of the mark the new one starts
// above: after a clean release, and after a crash (the lease expires in the store).
// The new holder's clock stands below the mark, or inside the mark's tick; either
// way its first ID must be in a tick that starts after the mark.
func TestProtocolTakeoverStartsAboveEveryID(t *testing.T) {
	for _, unit := range []string{"1ms", "10ms"} {
		l, err := layout.Parse("time:41:" + unit + ":2020-01-01T00:00:00Z,worker:2,seq:2")
		if err != nil {
			t.Fatal(err)
		}
		for _, end := range []string{"release", "expiry"} {
			for _, at := range []string{"clock behind the mark", "clock in the mark's tick"} {
				t.Run(unit+"/"+end+"/"+at, func(t *testing.T) {
					testTakeover(t, l, end == "expiry", at == "clock in the mark's tick")
				})
			}
		}
	}
}

func testTakeover(t *testing.T, l *layout.Layout, crash, inMarkTick bool) {
	ctx := context.Background()
	storeClock := clock.NewManual(time.Now())
	st := memstore.New(storeClock)
	defer st.Close()
	scope := leasetest.Scope(t)
	fixed := int64(1)
	ttl := 5 * time.Second
	opts := lease.Options{Store: st, Scope: scope, Fixed: &fixed, Budget: 100 * time.Millisecond, TTL: ttl, Window: 100 * time.Millisecond, Logger: quiet}

	first := clock.NewManual(time.Now())
	g1, s1, err := lease.NewGenerator(ctx, protocolGen(l, first, "first"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	defer s1.Close()
	ids := drain(t, g1, 4*1000)
	last := ids[len(ids)-1]
	if crash {
		// The first holder stops renewing (its clock stands still, so it never wakes)
		// and its lease expires by the store's clock.
		storeClock.Add(ttl + time.Second)
	} else if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	mark := storeMark(t, st, scope, fixed)
	checkCovered(t, l, ids, mark, "before the takeover")
	markTick := l.TickTime(l.TickOf(time.UnixMilli(mark)))
	if !l.TimeOf(last).Equal(markTick) {
		t.Fatalf("test setup: the first holder's last ID is at %v, not in the tick of the mark %v it leaves (tick at %v)",
			l.TimeOf(last), time.UnixMilli(mark).UTC(), markTick)
	}

	second := clock.NewManual(first.Time())
	if inMarkTick {
		second.Set(time.UnixMilli(mark))
	}
	g2, s2, err := lease.NewGenerator(ctx, protocolGen(l, second, "second"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	if v := s2.Status().Value; v != fixed {
		t.Fatalf("the new holder got value %d, not %d", v, fixed)
	}
	for i := 0; i < 10; i++ {
		id, err := g2.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			p, _ := l.Decompose(id)
			q, _ := l.Decompose(last)
			t.Fatalf("the new holder's ID %d (%+v, at %v) is not above the previous holder's last ID %d (%+v, at %v); the mark was %v",
				id, p, l.TimeOf(id), last, q, l.TimeOf(last), time.UnixMilli(mark).UTC())
		}
		if i == 0 && !l.TimeOf(id).After(time.UnixMilli(mark)) {
			t.Errorf("the new holder's first ID is at %v, in a tick that does not start after the mark %v", l.TimeOf(id), time.UnixMilli(mark).UTC())
		}
	}
}
