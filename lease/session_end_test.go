package lease_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/flurryid/flurry/internal/fence"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
)

// tally counts the calls a store sees that claim or release a value, and refuses
// renewals on demand, as a store does that rejects the configuration.
type tally struct {
	lease.Store
	claims, releases atomic.Int64
	refuse           atomic.Bool
}

var errRefused = fmt.Errorf("store refuses the renewal (injected): %w", lease.ErrBadConfig)

func (c *tally) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	c.claims.Add(1)
	return c.Store.Acquire(ctx, scope, size, owner, ttl)
}

func (c *tally) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	c.claims.Add(1)
	return c.Store.AcquireValue(ctx, scope, value, owner, ttl)
}

func (c *tally) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if c.refuse.Load() {
		return l, errRefused
	}
	return c.Store.Renew(ctx, l, ttl, mark)
}

func (c *tally) Release(ctx context.Context, l lease.Lease, mark int64) error {
	c.releases.Add(1)
	return c.Store.Release(ctx, l, mark)
}

// noneHeld fails the test if a value of scope is still held in st.
func noneHeld(t *testing.T, st lease.Store, scope string) {
	t.Helper()
	recs, err := st.List(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Held {
			t.Errorf("value %d of %s is still held by %s", r.Value, scope, r.Owner)
		}
	}
}

// Close from 16 goroutines at once while renewals run (every 100 ms) and IDs are
// issued: every call returns the first's result, the value is released once, and Done
// is closed with ErrClosed. Run with -race.
func TestSessionCloseConcurrently(t *testing.T) {
	st := &tally{Store: store(t, t.TempDir())}
	scope := leasetest.Scope(t)
	ctx := context.Background()
	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Namespace: t.Name()},
		lease.Options{Store: st, Scope: scope, TTL: time.Second, Window: 100 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor(t, "two renewals", func() bool { return s.Status().Renewals >= 2 })
	select {
	case <-s.Done():
		t.Fatalf("Done closed before Close: %v", s.Err())
	default:
	}
	if s.Err() != nil {
		t.Fatalf("Err before Close: %v", s.Err())
	}

	issuing := make(chan error)
	go func() {
		for {
			if _, err := g.Next(ctx); err != nil {
				issuing <- err
				return
			}
		}
	}()
	start := make(chan struct{})
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- s.Close()
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if err := <-issuing; !errors.Is(err, lease.ErrLost) {
		t.Errorf("issuing during Close ended with %v; want lease.ErrLost", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done still open after Close returned")
	}
	if err := s.Err(); !errors.Is(err, lease.ErrClosed) {
		t.Errorf("Err after Close: %v; want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a later Close: %v", err)
	}
	if n := st.releases.Load(); n != 1 {
		t.Errorf("%d releases; want 1", n)
	}
	noneHeld(t, st, scope)
}

// Errors that retrying cannot cure end Start at once (one attempt at most, long
// before its context's deadline), wrapped so that errors.Is finds their sentinel, and
// leave no value held.
func TestSessionStartPermanentErrors(t *testing.T) {
	twitter, _ := layout.Parse("twitter")
	wide, _ := layout.Parse("time:41:1ms:2020-01-01T00:00:00Z,worker:12,seq:10")
	managed := func(t *testing.T) *snowflake.Generator {
		g, err := newManaged(snowflake.Options{Layout: twitter, Namespace: t.Name()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	big := int64(3000) // fits the session's 12-bit worker field, not the generator's 5-bit datacenter
	for _, tc := range []struct {
		name string
		gen  func(t *testing.T) *snowflake.Generator
		opts lease.Options
		want error
	}{
		{"store refuses the owner", managed, lease.Options{Owner: strings.Repeat("x", 201)}, lease.ErrBadConfig},
		{"generator closed", func(t *testing.T) *snowflake.Generator {
			g := managed(t)
			g.Close()
			return g
		}, lease.Options{}, snowflake.ErrClosed},
		{"generator not managed", func(t *testing.T) *snowflake.Generator {
			g, err := snowflake.New(snowflake.Options{Layout: twitter, Namespace: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			return g
		}, lease.Options{}, lease.ErrBadConfig},
		{"node value outside the generator's layout", managed, lease.Options{Layout: wide, Fixed: &big}, lease.ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &tally{Store: store(t, t.TempDir())}
			o := tc.opts
			o.Store, o.Scope, o.Logger = st, leasetest.Scope(t), quiet
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := lease.Start(ctx, tc.gen(t), o)
			if s != nil {
				s.Close()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tc.want) || ctx.Err() != nil {
				t.Errorf("Start: %v (context: %v); want %v at once", err, ctx.Err(), tc.want)
			}
			if n := st.claims.Load(); n > 1 {
				t.Errorf("%d attempts; want at most one", n)
			}
			noneHeld(t, st, o.Scope)
		})
	}
}

// A Start that retries until its context ends returns an error that wraps both the
// context's error and the last failure.
func TestSessionStartTimeoutWrapsLastError(t *testing.T) {
	t.Run("every value held", func(t *testing.T) {
		st, scope := store(t, t.TempDir()), leasetest.Scope(t)
		fixed := int64(1)
		if _, err := st.AcquireValue(context.Background(), scope, fixed, "another holder", time.Minute); err != nil {
			t.Fatal(err)
		}
		err := startUntil(t, lease.Options{Store: st, Scope: scope, Fixed: &fixed})
		if !errors.Is(err, lease.ErrNoFreeValue) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start on a held value: %v; want ErrNoFreeValue and DeadlineExceeded", err)
		}
	})
	t.Run("store down", func(t *testing.T) {
		st := &faulty{Store: store(t, t.TempDir())}
		st.outage.Store(true)
		err := startUntil(t, lease.Options{Store: st, Scope: leasetest.Scope(t)})
		if !errors.Is(err, errDown) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start on a store that is down: %v; want its error and DeadlineExceeded", err)
		}
	})
}

// startUntil starts a session whose first acquisition has 300 ms, and returns Start's
// error. It may run outside the test's goroutine, so it reports with t.Error only.
func startUntil(t *testing.T, o lease.Options) error {
	t.Helper()
	g, err := newManaged(snowflake.Options{Namespace: t.Name()})
	if err != nil {
		t.Error(err)
		return err
	}
	defer g.Close()
	o.Logger = quiet
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	s, err := lease.Start(ctx, g, o)
	if s != nil {
		s.Close()
		t.Error("Start succeeded")
	}
	return err
}

// A renewal that meets an error retrying cannot cure ends the session: Done closes,
// Err says why, the generator stops, and Close still releases the value.
func TestSessionEndsWhenRenewalCannotSucceed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(g *snowflake.Generator, st *tally)
		want  error
	}{
		{"generator closed", func(g *snowflake.Generator, _ *tally) { g.Close() }, snowflake.ErrClosed},
		{"store refuses", func(_ *snowflake.Generator, st *tally) { st.refuse.Store(true) }, lease.ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual(time.Now())
			st, scope := &tally{Store: store(t, t.TempDir())}, leasetest.Scope(t)
			ctx := context.Background()
			g, s, err := lease.NewGenerator(ctx, snowflake.Options{Clock: clk, Namespace: t.Name()},
				lease.Options{Store: st, Scope: scope, TTL: 3 * time.Second, Window: 100 * time.Millisecond, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if _, err := g.Next(ctx); err != nil {
				t.Fatal(err)
			}
			tc.fault(g, st)
			// Move the clock by the renewal interval until a renewal has met the fault.
			for i := 0; ; i++ {
				clk.Add(100 * time.Millisecond)
				select {
				case <-s.Done():
				case <-time.After(10 * time.Millisecond):
					if i == 1000 {
						t.Fatalf("the session goes on: %+v", s.Status())
					}
					continue
				}
				break
			}
			if err := s.Err(); !errors.Is(err, tc.want) {
				t.Errorf("Err: %v; want %v", err, tc.want)
			}
			if _, err := g.Next(ctx); err == nil {
				t.Error("the generator issues after its session ended")
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := s.Err(); !errors.Is(err, tc.want) {
				t.Errorf("Err after Close: %v; want still %v", err, tc.want)
			}
			noneHeld(t, st, scope)
		})
	}
}

// stuck is a store whose renewals fail and whose releases never answer: they return
// only when their context ends.
type stuck struct{ lease.Store }

func (s stuck) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	return l, errDown
}

func (s stuck) Release(ctx context.Context, l lease.Lease, mark int64) error {
	<-ctx.Done()
	return ctx.Err()
}

// Releasing a value after a failed attempt is bounded by the TTL, even though it
// outlives Start's context: a store that does not answer cannot hold Start up for
// ever.
func TestSessionStartAbandonIsBounded(t *testing.T) {
	st := stuck{store(t, t.TempDir())}
	errc := make(chan error, 1)
	go func() {
		errc <- startUntil(t, lease.Options{Store: st, Scope: leasetest.Scope(t), TTL: time.Second})
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, errDown) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start: %v; want the renewal's error and DeadlineExceeded", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Start still waits for a release that never answers")
	}
}

// newManaged makes a lease-fed generator with no session, as lease.NewGenerator does
// before it starts one, for tests that call Start themselves.
func newManaged(o snowflake.Options) (*snowflake.Generator, error) {
	o.Fence = fence.New()
	return snowflake.New(o)
}
