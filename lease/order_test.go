package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/sqlstore"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
	"github.com/flurryid/flurry/verify/testenv"
)

// orderStores are the stores the order tests run on: the embedded file store and
// one real engine.
func orderStores(t *testing.T) map[string]func(t *testing.T) lease.Store {
	dir := t.TempDir()
	return map[string]func(t *testing.T) lease.Store{
		"file": func(t *testing.T) lease.Store { return store(t, dir) },
		"postgres": func(t *testing.T) lease.Store {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o, err := sqlstore.ParseURL(testenv.Postgres.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			o.Table = "flurry_leases_test"
			s, err := sqlstore.Open(ctx, o)
			if err != nil {
				t.Fatalf("opening PostgreSQL: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// run1 is a first run: a holder of any value of scope's pool (2 bits, 4 values)
// issues n IDs on clk and closes cleanly, releasing its value. It returns the value
// and the last ID.
func run1(t *testing.T, st lease.Store, l *layout.Layout, scope string, clk clock.Clock, n int) (int64, flurry.ID) {
	t.Helper()
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: clk, Namespace: t.Name() + "/1"},
		lease.Options{Store: st, Scope: scope, Logger: quiet, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var last flurry.ID
	for i := 0; i < n; i++ {
		if last, err = g.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	v := s.Status().Value
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	g.Close()
	return v, last
}

// A process stops cleanly and restarts with its clock 30 s behind. The pool hands it
// a never-used value (the lowest mark), whose own mark is 0. With the default order
// (scope) it must not issue below the first run's IDs: it refuses with the typed
// ErrClockBehind until its clock passes the first run's last tick, then issues
// above; with Behind: Logical it issues above at once. With order value it issues at
// once, below the first run (unique, on another node value): today's behaviour,
// kept as an explicit choice.
func TestOrderAcrossSkewedRestart(t *testing.T) {
	l, _ := layout.Parse("time:41:1ms:2020-01-01T00:00:00Z,worker:2,seq:12")
	for name, open := range orderStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("scope fails until safe", func(t *testing.T) {
				st, scope := open(t), leasetest.Scope(t)
				first := clock.NewFake(time.Now())
				v1, max1 := run1(t, st, l, scope, first, 5000)
				// 30 s behind the first run's last ID, not behind first.Now(): the first
				// session's run loop sleeps on the fake clock, and clock.Fake's SleepUntil
				// jumps it forward, so first may stand a few seconds past its last ID.
				second := clock.NewFake(l.TimeOf(max1).Add(-30 * time.Second))
				// The first run's release marks what its generator may have issued up
				// to its clock at Close (IssuedThrough counts the current tick, which a
				// call already past the fence may still take), so the floor stands up to
				// that much above its last ID, and no more.
				ahead := first.Time().Sub(l.TimeOf(max1))
				g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: second, Namespace: t.Name()},
					lease.Options{Store: st, Scope: scope, Logger: quiet, TTL: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				defer s.Close()
				if v := s.Status().Value; v == v1 {
					t.Logf("the pool gave the restart its old value %d", v)
				}
				if !s.Status().Above.Equal(l.TimeOf(max1)) && s.Status().Above.Before(l.TimeOf(max1)) {
					t.Errorf("the restart starts above %v, below the first run's last ID at %v", s.Status().Above, l.TimeOf(max1))
				}
				for i := 0; i < 3; i++ {
					id, err := g.Next(context.Background())
					var cb *snowflake.ClockBehindError
					if !errors.As(err, &cb) {
						t.Fatalf("clock 30 s behind the first run: Next = %d, %v; want a *ClockBehindError (first run's last ID %d)", id, err, max1)
					}
					// The second session's run loop may advance the fake clock too (see
					// above), so the gap may shrink below 30 s minus the test's own steps.
					if cb.Gap < 15*time.Second || cb.Gap > 31*time.Second+ahead {
						t.Errorf("gap %v, want about 30s (at most 31s plus the first run's clock past its last ID at Close, %v)", cb.Gap, ahead)
					}
					second.Add(time.Second)
				}
				second.Set(first.Time().Add(time.Millisecond))
				prev := max1
				for i := 0; i < 5000; i++ {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if id <= prev {
						t.Fatalf("ID %d of the restart is not above %d (first run's last %d)", id, prev, max1)
					}
					prev = id
				}
			})
			t.Run("scope logical goes on above", func(t *testing.T) {
				st, scope := open(t), leasetest.Scope(t)
				first := clock.NewFake(time.Now())
				_, max1 := run1(t, st, l, scope, first, 5000)
				// 30 s behind the first run's last ID, not behind first.Now(): the first
				// session's run loop sleeps on the fake clock, and clock.Fake's SleepUntil
				// jumps it forward, so first may stand a few seconds past its last ID.
				second := clock.NewFake(l.TimeOf(max1).Add(-30 * time.Second))
				g, s, err := lease.NewGenerator(context.Background(),
					snowflake.Options{Layout: l, Clock: second, Namespace: t.Name(), Behind: snowflake.Logical, MaxDrift: time.Minute},
					lease.Options{Store: st, Scope: scope, Logger: quiet, TTL: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				defer s.Close()
				prev := max1
				for i := 0; i < 5000; i++ {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if id <= prev {
						t.Fatalf("ID %d of the restart is not above %d (first run's last %d)", id, prev, max1)
					}
					prev = id
				}
			})
			t.Run("value", func(t *testing.T) {
				st, scope := open(t), leasetest.Scope(t)
				first := clock.NewFake(time.Now())
				v1, max1 := run1(t, st, l, scope, first, 5000)
				// 30 s behind the first run's last ID, not behind first.Now(): the first
				// session's run loop sleeps on the fake clock, and clock.Fake's SleepUntil
				// jumps it forward, so first may stand a few seconds past its last ID.
				second := clock.NewFake(l.TimeOf(max1).Add(-30 * time.Second))
				g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: second, Namespace: t.Name()},
					lease.Options{Store: st, Scope: scope, Logger: quiet, TTL: time.Minute, Order: lease.OrderValue})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				defer s.Close()
				if s.Status().Value == v1 {
					t.Fatalf("the pool gave the restart its old value %d: this test needs a fresh one", v1)
				}
				id, err := g.Next(context.Background())
				if err != nil || id >= max1 {
					t.Fatalf("order value: %d, %v; want an ID at once, below the first run's %d", id, err, max1)
				}
			})
		})
	}
}

// Live holders' marks are reservations ahead of their clocks: a new holder of the
// scope does not wait for them, only for leases that ended.
func TestOrderScopeLeavesOutLiveHolders(t *testing.T) {
	l, _ := layout.Parse("time:41:1ms:2020-01-01T00:00:00Z,worker:2,seq:12")
	st, scope := store(t, t.TempDir()), leasetest.Scope(t)
	ahead := clock.NewFake(time.Now().Add(time.Hour))
	g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: ahead, Namespace: t.Name() + "/ahead"},
		lease.Options{Store: st, Scope: scope, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	defer s1.Close()
	if _, err := g1.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	g2, s2, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Namespace: t.Name() + "/now"},
		lease.Options{Store: st, Scope: scope, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	if _, err := g2.Next(context.Background()); err != nil {
		t.Fatalf("a live holder an hour ahead held up a new holder: %v", err)
	}
	if s2.Status().Above.After(time.Now()) {
		t.Errorf("the new holder starts above %v, a live holder's reservation", s2.Status().Above)
	}
}

// TTL and Window bounds are configuration errors, refused at once (ErrBadConfig)
// instead of overflowing the deadlines (a TTL of 2,500,000h left a session holding
// its value with a grant that had ended before it began).
func TestSessionTimingBounds(t *testing.T) {
	st := store(t, t.TempDir())
	l, _ := layout.Parse("twitter")
	for _, o := range []lease.Options{
		{TTL: 2_500_000 * time.Hour},
		{TTL: lease.MaxTTL + time.Millisecond},
		{TTL: 1500 * time.Microsecond * 1000}, // 1.5s: fine
		{Window: 2 * time.Hour},
		{Window: 50 * time.Millisecond},
	} {
		o.Store, o.Scope, o.Logger = st, leasetest.Scope(t), quiet
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: t.Name()}, o)
		cancel()
		ok := o.TTL <= lease.MaxTTL && o.Window <= lease.MaxWindow && (o.Window == 0 || o.Window >= lease.MinWindow)
		switch {
		case ok && err != nil:
			t.Errorf("TTL %v Window %v: %v", o.TTL, o.Window, err)
		case !ok && !errors.Is(err, lease.ErrBadConfig):
			t.Errorf("TTL %v Window %v: %v; want ErrBadConfig", o.TTL, o.Window, err)
		}
		if s != nil {
			if _, err := g.Next(context.Background()); err != nil {
				t.Errorf("TTL %v Window %v: Next: %v", o.TTL, o.Window, err)
			}
			s.Close()
			g.Close()
		}
	}
	for _, ttl := range []time.Duration{2_500_000 * time.Hour, lease.MaxTTL + time.Second, 999 * time.Millisecond} {
		if _, err := st.Acquire(context.Background(), leasetest.Scope(t), 4, "x", ttl); !errors.Is(err, lease.ErrBadConfig) {
			t.Errorf("Acquire with ttl %v: %v; want ErrBadConfig", ttl, err)
		}
	}
}
