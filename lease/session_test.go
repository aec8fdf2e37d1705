package lease_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/leasetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func store(t *testing.T, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// faulty wraps a real store and fails renewals on demand: an outage (a transport
// error) or a loss (ErrLost, as when the lease expired and was taken).
type faulty struct {
	lease.Store
	outage atomic.Bool
	lose   atomic.Int32
}

var errDown = errors.New("store unreachable (injected)")

func (f *faulty) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if f.outage.Load() {
		return l, errDown
	}
	if f.lose.Load() > 0 {
		f.lose.Add(-1)
		return l, lease.ErrLost
	}
	return f.Store.Renew(ctx, l, ttl, mark)
}

func (f *faulty) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if f.outage.Load() {
		return lease.Lease{}, errDown
	}
	return f.Store.Acquire(ctx, scope, size, owner, ttl)
}

func TestSessionLeasesDistinctValues(t *testing.T) {
	dir := t.TempDir()
	scope := leasetest.Scope(t)
	l, _ := layout.Parse("twitter")
	ctx := context.Background()
	seen := map[layout.NodeValues]bool{}
	for i := 0; i < 4; i++ {
		g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: t.Name() + string(rune('a'+i))},
			lease.Options{Store: store(t, dir), Scope: scope, Node: layout.NodeValues{3}, Leased: []string{"worker"}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		defer s.Close()
		st := s.Status()
		if !st.Held || st.Scope != scope+"/datacenter=3" || st.Node[0] != 3 || seen[st.Node] {
			t.Fatalf("session %d status %+v", i, st)
		}
		seen[st.Node] = true
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := l.Decompose(id); p.Nodes != st.Node {
			t.Errorf("ID node %v, lease node %v", p.Nodes, st.Node)
		}
	}
}

// A pool of one value: the second session waits, and takes over the value the moment
// the first closes, issuing strictly above everything the first could have issued.
func TestSessionHandOverAboveMark(t *testing.T) {
	dir := t.TempDir()
	scope := leasetest.Scope(t)
	l, _ := layout.Parse("time:41:1ms:2020-01-01T00:00:00Z,worker:1,seq:12")
	ctx := context.Background()
	fixed := int64(1)
	opts := lease.Options{Store: store(t, dir), Scope: scope, Fixed: &fixed, Logger: quiet, TTL: 2 * time.Second, Window: 500 * time.Millisecond}
	g1, s1, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: "one"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	var last flurry.ID
	for i := 0; i < 1000; i++ {
		if last, err = g1.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mark := s1.Status().Mark
	waitCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if _, _, err := lease.NewGenerator(waitCtx, snowflake.Options{Layout: l, Namespace: "two"}, opts); err == nil {
		t.Fatal("a second holder got the fixed value while the first held it")
	}
	cancel()
	type result struct {
		g   *snowflake.Generator
		s   *lease.Session
		err error
	}
	got := make(chan result)
	second := &refusals{Store: store(t, dir)}
	go func() {
		o := opts
		o.Store = second
		g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: "two", Behind: snowflake.Logical, MaxDrift: time.Second}, o)
		got <- result{g, s, err}
	}()
	waitFor(t, "the second session to be refused the value the first holds", func() bool { return second.n.Load() > 0 })
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g1.Next(ctx); !errors.Is(err, lease.ErrLost) {
		t.Errorf("generator after its session closed: %v", err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.g.Close()
	defer r.s.Close()
	id, err := r.g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id <= last || !l.TimeOf(id).After(l.TimeOf(last)) {
		t.Errorf("new holder's first ID %d at %v; the old holder issued up to %d at %v", id, l.TimeOf(id), last, l.TimeOf(last))
	}
	// The old holder released with the mark of what it issued, below its reservation:
	// the new holder starts above that, not above the whole reservation.
	if above := r.s.Status().Above; above.Before(l.TimeOf(last)) || !above.Before(mark) {
		t.Errorf("new holder starts above %v; the old holder issued up to %v and had reserved through %v", above, l.TimeOf(last), mark)
	}
}

func TestSessionOutageFencesThenRecovers(t *testing.T) {
	st := &faulty{Store: store(t, t.TempDir())}
	ctx := context.Background()
	ttl := time.Second
	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Namespace: t.Name()},
		lease.Options{Store: st, Scope: leasetest.Scope(t), TTL: ttl, Window: 400 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	waitFor(t, "a renewal (every 333 ms, TTL/3)", func() bool { return s.Status().Renewals > 0 })
	failures := s.Status().Failures
	st.outage.Store(true)
	outageStart := time.Now()
	// A renewal already in flight may still land; the first one the outage fails
	// comes after it, so from then on the lease's expiry in the store stays put.
	waitFor(t, "a renewal to fail in the outage", func() bool { return s.Status().Failures > failures })
	before := s.Status() // the last successful renewal's expiry, by the store
	var stoppedAt, lastIssued time.Time
	for time.Since(outageStart) < waitBound {
		_, err := g.Next(ctx)
		if errors.Is(err, lease.ErrLost) {
			stoppedAt = time.Now()
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lastIssued = time.Now() // the ID was issued before this reading
		time.Sleep(time.Millisecond)
	}
	if stoppedAt.IsZero() {
		t.Fatalf("the generator kept issuing through a %v outage with a 1 s TTL", waitBound)
	}
	// It must stop before the store could let the lease expire and hand the value over.
	if !lastIssued.Before(before.Expires) {
		t.Errorf("issued at %v, not before the lease's expiry in the store %v", lastIssued, before.Expires)
	}
	stoppedAfter := stoppedAt.Sub(outageStart)
	t.Logf("stopped %v into the outage (TTL %v); status %+v", stoppedAfter, ttl, s.Status())
	st.outage.Store(false)
	deadline := time.Now().Add(waitBound)
	for {
		if _, err := g.Next(ctx); err == nil {
			break
		} else if !errors.Is(err, lease.ErrLost) && !errors.Is(err, snowflake.ErrClockBehind) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the store returned: %+v", s.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.Status().Failures == 0 {
		t.Error("failures not counted")
	}
}

// A lost lease stops the generator; the session acquires another value and issuing
// goes on from it, never repeating an ID. The test waits for the loss and the new
// lease, not for a time: the lost value stays held in the store (the store only told
// the session it was lost) for a TTL longer than the test takes on a loaded machine,
// so the new lease is another value.
func TestSessionLossReacquires(t *testing.T) {
	st := &faulty{Store: store(t, t.TempDir())}
	ctx := context.Background()
	l, _ := layout.Parse("twitter")
	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: t.Name()},
		lease.Options{Store: st, Scope: leasetest.Scope(t), TTL: 3 * time.Second, Window: 300 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	perNode := map[layout.NodeValues]flurry.ID{}
	seen := map[flurry.ID]bool{}
	issue := func(id flurry.ID) layout.NodeValues {
		t.Helper()
		p, _ := l.Decompose(id)
		if seen[id] || id <= perNode[p.Nodes] {
			t.Fatalf("ID %d repeated or not increasing for node %v", id, p.Nodes)
		}
		seen[id], perNode[p.Nodes] = true, id
		return p.Nodes
	}
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := issue(id)
	// The next renewal is told the lease is lost. Issue until the session has lost
	// it and holds another, riding out the refusals between.
	st.lose.Store(1)
	deadline := time.Now().Add(waitBound)
	for st := s.Status(); st.Losses == 0 || !st.Held; st = s.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for the session to lose its lease and hold another: %+v", waitBound, st)
		}
		id, err := g.Next(ctx)
		switch {
		case errors.Is(err, lease.ErrLost):
			time.Sleep(time.Millisecond)
		case err != nil:
			t.Fatal(err)
		default:
			issue(id)
		}
	}
	var node layout.NodeValues
	for range 500 {
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatalf("after the session holds a new lease: %v", err)
		}
		node = issue(id)
	}
	if node == first {
		t.Errorf("after the loss the generator issues on node %v, the lost lease's", first)
	}
	if st := s.Status(); st.Losses != 1 || !st.Held || len(perNode) != 2 {
		t.Errorf("status after a loss %+v; IDs from %d node values, want 2", st, len(perNode))
	}
	// A loss the session recovered from does not end it.
	select {
	case <-s.Done():
		t.Errorf("Done closed by a loss the session recovered from: %v", s.Err())
	default:
	}
}

func TestSessionOptionErrors(t *testing.T) {
	st := store(t, t.TempDir())
	l, _ := layout.Parse("twitter")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	tooBig := int64(40)
	for _, o := range []lease.Options{
		{},
		{Store: st, Leased: []string{"shard"}},
		{Store: st, Leased: []string{"worker"}, Node: layout.NodeValues{0, 4}},
		{Store: st, Leased: []string{"worker"}, Fixed: &tooBig},
		{Store: st, Scope: "bad scope"},
		{Store: st, TTL: time.Millisecond},
		{Store: st, Layout: func() *layout.Layout { m, _ := layout.Parse("mastodon"); return m }()},
	} {
		o.Logger = quiet
		gl := l
		if o.Layout != nil {
			gl = o.Layout
		}
		if g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: gl, Namespace: t.Name()}, o); err == nil {
			s.Close()
			g.Close()
			t.Errorf("NewGenerator(%+v) accepted", o)
		} else if !errors.Is(err, lease.ErrBadConfig) {
			t.Errorf("NewGenerator(%+v): %v; want an error matching ErrBadConfig", o, err)
		}
	}
	// gopts.Node is the lease's to give.
	if g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Node: layout.NodeValues{1, 1}, Namespace: t.Name()}, lease.Options{Store: st, Logger: quiet}); err == nil {
		s.Close()
		g.Close()
		t.Error("NewGenerator with a node value in the generator's options accepted")
	}
}

// Start drives only generators made by NewGenerator: any other fails at once with
// ErrBadConfig, instead of retrying until the context ends. A generator whose
// session was closed can be given a new one.
func TestStartNeedsLeasedGenerator(t *testing.T) {
	st := store(t, t.TempDir())
	l, _ := layout.Parse("twitter")
	plain, err := snowflake.New(snowflake.Options{Layout: l, Namespace: t.Name() + "/plain"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := lease.Options{Store: st, Scope: leasetest.Scope(t), Layout: l, Logger: quiet}
	for _, g := range []*snowflake.Generator{plain, nil} {
		if s, err := lease.Start(ctx, g, o); !errors.Is(err, lease.ErrBadConfig) || ctx.Err() != nil {
			if s != nil {
				s.Close()
			}
			t.Fatalf("Start with a generator not made by NewGenerator (%v): %v (context: %v); want ErrBadConfig at once", g, err, ctx.Err())
		}
	}

	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l, Namespace: t.Name()}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	first, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Next after the session closed: %v; want lease.ErrLost", err)
	}
	s2, err := lease.Start(ctx, g, o)
	if err != nil {
		t.Fatalf("Start on a generator whose session was closed: %v", err)
	}
	defer s2.Close()
	again, err := g.Next(ctx)
	if err != nil || again <= first {
		t.Fatalf("after a new session: %d, %v; want an ID above %d", again, err, first)
	}
}

func TestSessionWithFakeClockStartsAboveMark(t *testing.T) {
	// Another machine whose clock is 5 s behind takes over a value: it refuses with
	// ErrClockBehind (the Fail policy) rather than reissue, and issues once its clock
	// passes the mark.
	dir := t.TempDir()
	scope := leasetest.Scope(t)
	fixed := int64(0)
	l, _ := layout.Parse("twitter")
	ahead := clock.NewManual(time.Now())
	g1, s1, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: ahead, Namespace: "a"},
		lease.Options{Store: store(t, dir), Scope: scope, Fixed: &fixed, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := g1.Next(context.Background())
	s1.Close()
	g1.Close()
	behind := clock.NewManual(ahead.Time().Add(-5 * time.Second))
	g2, s2, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Clock: behind, Namespace: "b"},
		lease.Options{Store: store(t, dir), Scope: scope, Fixed: &fixed, Logger: quiet, TTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	defer s2.Close()
	if _, err := g2.Next(context.Background()); !errors.Is(err, snowflake.ErrClockBehind) {
		t.Fatalf("clock 5 s behind the mark: %v", err)
	}
	// Past the mark the first holder released with (its last tick plus one), inside
	// this holder's own reservation.
	behind.Set(ahead.Time().Add(time.Second))
	second, err := g2.Next(context.Background())
	if err != nil || second <= first {
		t.Fatalf("after catching up: %d, %v (first holder issued %d)", second, err, first)
	}
}

// refusals counts the acquisitions a store refused because every value was held.
type refusals struct {
	lease.Store
	n atomic.Int64
}

func (r *refusals) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	l, err := r.Store.AcquireValue(ctx, scope, value, owner, ttl)
	if errors.Is(err, lease.ErrNoFreeValue) {
		r.n.Add(1)
	}
	return l, err
}

func (r *refusals) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	l, err := r.Store.Acquire(ctx, scope, size, owner, ttl)
	if errors.Is(err, lease.ErrNoFreeValue) {
		r.n.Add(1)
	}
	return l, err
}

// counting counts the writes a store sees.
type counting struct {
	lease.Store
	renews atomic.Int64
}

func (c *counting) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	c.renews.Add(1)
	return c.Store.Renew(ctx, l, ttl, mark)
}

// The store sees one write per reservation window, however many IDs are issued.
func TestSessionOneWritePerWindow(t *testing.T) {
	st := &counting{Store: store(t, t.TempDir())}
	window := 200 * time.Millisecond
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Namespace: t.Name()},
		lease.Options{Store: st, Scope: leasetest.Scope(t), TTL: 3 * time.Second, Window: window, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	start := time.Now()
	var n int
	for time.Since(start) < 10*window {
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	elapsed := time.Since(start)
	writes := st.renews.Load()
	// One reservation at start, then one per window; never a write per ID.
	if max := int64(elapsed/window) + 2; writes > max || writes < 5 {
		t.Errorf("%d store writes in %v for %d IDs; want one per %v window (at most %d)", writes, elapsed, n, window, max)
	}
	t.Logf("%d IDs, %d store writes in %v", n, writes, elapsed)
}

// A clean close releases the value with the mark of what was issued, not the whole
// reservation, so the next holder starts at once.
func TestSessionCloseReleasesRealMark(t *testing.T) {
	dir := t.TempDir()
	scope := leasetest.Scope(t)
	fixed := int64(2)
	opts := lease.Options{Store: store(t, dir), Scope: scope, Fixed: &fixed, Logger: quiet}
	l, _ := layout.Parse("twitter")
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Namespace: "first"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := g.Next(context.Background())
	reserved := s.Status().Mark
	s.Close()
	g.Close()
	recs, _ := store(t, dir).List(context.Background(), s.Status().Scope)
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	mark := time.UnixMilli(recs[0].Mark)
	if mark.Before(l.TimeOf(last)) || !mark.Before(reserved) || mark.Sub(l.TimeOf(last)) > time.Second {
		t.Errorf("released mark %v; last ID at %v, reservation to %v", mark, l.TimeOf(last), reserved)
	}
}

// Node fields given in Node name the pool, each as a path segment.
func TestSessionScopeWithSeveralFixedFields(t *testing.T) {
	l, _ := layout.Parse("gameserver")
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Namespace: t.Name()},
		lease.Options{Store: store(t, t.TempDir()), Node: layout.NodeValues{1, 2}, Leased: []string{"app"}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer s.Close()
	if got := s.Status().Scope; got != "default/platform=1/area=2" {
		t.Errorf("scope %q", got)
	}
}

// The session waits on its clock, not on real time: with a clock that stands still it
// never renews, and each step of the clock by the renewal interval brings one renewal.
// Close ends the wait.
func TestSessionRenewsOnItsClock(t *testing.T) {
	clk := clock.NewManual(time.Now())
	st := &counting{Store: store(t, t.TempDir())}
	g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Clock: clk, Namespace: t.Name()},
		lease.Options{Store: st, Scope: leasetest.Scope(t), TTL: 3 * time.Second, Window: 100 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if n := st.renews.Load(); n != 1 {
		t.Fatalf("%d writes at the start; want the one reservation", n)
	}
	time.Sleep(300 * time.Millisecond) // three renewal intervals of real time
	if n := s.Status().Renewals; n != 0 {
		t.Fatalf("%d renewals while the clock stood still", n)
	}
	for want := int64(1); want <= 3; want++ {
		// Move the clock once the session sleeps on it: moved while the session is
		// between a renewal and its next sleep, the clock would put that sleep's end
		// a whole interval past the move (CI saw it: 1 renewal after 2 steps).
		deadline := time.Now().Add(10 * time.Second)
		for clk.Sleepers() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		clk.Add(100 * time.Millisecond)
		for s.Status().Renewals < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := s.Status().Renewals; n != want {
			t.Fatalf("after %d steps of the interval: %d renewals", want, n)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := st.renews.Load(); n != 4 {
		t.Errorf("%d writes; want the reservation and three renewals", n)
	}
}

// A session with Prefer takes the preferred value (mod the pool's size) when it is
// free, and another free one when it is held.
func TestSessionPrefer(t *testing.T) {
	st := store(t, t.TempDir())
	scope := leasetest.Scope(t)
	prefer := uint64(64*1000 + 37) // the default layout's pool has 64 values
	l, err := layout.Parse("time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16")
	if err != nil {
		t.Fatal(err)
	}
	open := func() (*snowflake.Generator, *lease.Session) {
		g, s, err := lease.NewGenerator(context.Background(), snowflake.Options{Layout: l, Namespace: t.Name()},
			lease.Options{Store: st, Scope: scope, Prefer: &prefer, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(); s.Close() })
		return g, s
	}
	_, a := open()
	if v := a.Status().Value; v != 37 {
		t.Errorf("first session took value %d, want the preferred 37", v)
	}
	_, b := open()
	if v := b.Status().Value; v == 37 {
		t.Errorf("second session took the held value 37")
	}
}
