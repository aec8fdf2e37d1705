package snowflake

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

func ms(t time.Time) int64 { return t.UnixMilli() }

func TestManagedGrantFencing(t *testing.T) {
	for _, c := range variants {
		t.Run(c.String(), func(t *testing.T) { testManagedGrantFencing(t, c) })
	}
}

func testManagedGrantFencing(t *testing.T, c contention) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGenWith(t, Options{Layout: l, Clock: f}, c, true)
	if _, err := g.Next(bg); !errors.Is(err, fence.ErrLost) || !strings.Contains(err.Error(), "no node value granted yet") {
		t.Fatalf("before any grant: %v", err)
	}
	node := layout.NodeValues{1, 7}
	grant := fence.Grant{Node: node, Above: ms(t0.Add(5 * time.Second)), Through: ms(t0.Add(10 * time.Second)), Until: t0.Add(20 * time.Second).UnixNano()}
	if err := g.grant(grant); err != nil {
		t.Fatal(err)
	}
	// The clock is 5 s behind the mark an earlier holder left: refuse, never reuse.
	if _, err := g.Next(bg); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("clock behind the mark: %v", err)
	}
	// At the mark, the mark's own tick is still the earlier holder's: the generator
	// waits for the next tick (the fake clock's sleep moves it) and issues there.
	f.Set(t0.Add(5 * time.Second))
	id := next(t, g)
	p, _ := l.Decompose(id)
	if p.Nodes != node || !l.TickTime(p.Tick).After(t0.Add(5*time.Second)) {
		t.Fatalf("first ID %+v; want node %v above the mark", p, node)
	}
	f.Set(t0.Add(10 * time.Second)) // the last tick of the reservation starts at Through
	next(t, g)
	f.Add(time.Millisecond)
	if _, err := g.Next(bg); !errors.Is(err, fence.ErrLost) || !strings.Contains(err.Error(), "the reservation ends") {
		t.Fatalf("past the reservation: %v", err)
	}
	grant.Through = ms(t0.Add(40 * time.Second))
	if err := g.grant(grant); err != nil {
		t.Fatal(err)
	}
	next(t, g)
	f.Set(t0.Add(20 * time.Second))
	if _, err := g.Next(bg); !errors.Is(err, fence.ErrLost) || !strings.Contains(err.Error(), "not renewed within the outage budget") {
		t.Fatalf("past Until: %v", err)
	}
	grant.Until = t0.Add(30 * time.Second).UnixNano()
	g.grant(grant)
	last := next(t, g)
	g.revoke(errors.New("store said the lease is gone"))
	if _, err := g.Next(bg); !errors.Is(err, fence.ErrLost) || !strings.Contains(err.Error(), "store said the lease is gone") {
		t.Fatalf("after Revoke: %v", err)
	}
	g.grant(grant)
	if again := next(t, g); again <= last {
		t.Errorf("after re-grant %d <= %d", again, last)
	}
}

func TestManagedMovesToAnotherNode(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newManaged(t, Options{Layout: l, Clock: f, Namespace: "move"})
	a, b := layout.NodeValues{0, 1}, layout.NodeValues{0, 2}
	forever := fence.Grant{Through: ms(t0.Add(time.Hour)), Until: t0.Add(time.Hour).UnixNano()}
	ga := forever
	ga.Node = a
	if err := g.grant(ga); err != nil {
		t.Fatal(err)
	}
	idA := next(t, g)
	// Another generator in this process holds b: the move is refused, a stays.
	other := newGen(t, Options{Layout: l, Clock: f, Node: b, Namespace: "move"})
	gb := forever
	gb.Node = b
	if err := g.grant(gb); !errors.Is(err, ErrInUse) {
		t.Fatalf("move onto a value in use: %v", err)
	}
	if g.Node() != a {
		t.Errorf("node %v after a refused move", g.Node())
	}
	other.Close()
	if err := g.grant(gb); err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(next(t, g)); p.Nodes != b {
		t.Errorf("after the move the ID has node %v", p.Nodes)
	}
	// a is free in this process again.
	ga2, err := New(Options{Layout: l, Clock: f, Node: a, Namespace: "move"})
	if err != nil {
		t.Fatalf("old node not released: %v", err)
	}
	ga2.Close()
	// Moving back to a continues above what a issued before.
	if err := g.grant(ga); err != nil {
		t.Fatal(err)
	}
	if back := next(t, g); back <= idA {
		t.Errorf("back on node a: %d <= %d", back, idA)
	}
	if _, err := New(Options{Layout: l, Node: a, Fence: fence.New()}); err == nil {
		t.Error("Managed with a Node accepted")
	}
}

func TestManagedZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	f := clock.NewFake(t0)
	g := newManaged(t, Options{Clock: f, Overflow: Borrow, MaxDrift: time.Hour})
	g.grant(fence.Grant{Node: layout.NodeValues{0, 1}, Through: ms(t0.Add(2 * time.Hour)), Until: t0.Add(2 * time.Hour).UnixNano()})
	var sink flurry.ID
	if n := testing.AllocsPerRun(10000, func() { sink, _ = g.Next(bg) }); n != 0 {
		t.Errorf("managed Next allocates %v per call", n)
	}
	_ = sink
}

// Moving to another node value inside one tick must not return a smaller ID: the
// new value starts after the last tick the old one issued in.
func TestManagedMoveKeepsOrder(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newManaged(t, Options{Layout: l, Clock: f})
	far := fence.Grant{Through: ms(t0.Add(time.Hour)), Until: t0.Add(time.Hour).UnixNano()}
	a, b := far, far
	a.Node, b.Node = layout.NodeValues{0, 5}, layout.NodeValues{0, 1}
	g.grant(a)
	first := next(t, g)
	g.grant(b) // same tick, smaller node value
	if second := next(t, g); second <= first {
		t.Errorf("after moving to a smaller node value in the same tick: %d <= %d", second, first)
	}
}

func TestIssuedThrough(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newManaged(t, Options{Layout: l, Clock: f})
	if g.issuedThrough() != 0 {
		t.Error("IssuedThrough before any grant")
	}
	g.grant(fence.Grant{Node: layout.NodeValues{0, 5}, Through: ms(t0.Add(4 * time.Second)), Until: t0.Add(time.Hour).UnixNano()})
	id := next(t, g)
	g.revoke(nil)
	got := g.issuedThrough()
	// The last tick issued, plus the one tick a call past the fence could still take.
	if want := ms(l.TimeOf(id)) + 1; got != want {
		t.Errorf("IssuedThrough = %d, want %d (the reservation went to %d)", got, want, ms(t0.Add(4*time.Second)))
	}
}

// Closing a managed generator releases only the value it holds now, not one it moved
// away from that another generator took since.
func TestManagedCloseReleasesOnlyItsValue(t *testing.T) {
	l := lay(t, "twitter")
	far := fence.Grant{Through: ms(t0.Add(time.Hour)), Until: t0.Add(time.Hour).UnixNano()}
	a, b := far, far
	a.Node, b.Node = layout.NodeValues{0, 1}, layout.NodeValues{0, 2}
	g := newManaged(t, Options{Layout: l, Clock: clock.NewFake(t0), Namespace: "close"})
	g.grant(a)
	g.grant(b) // a is free again
	other := newGen(t, Options{Layout: l, Node: a.Node, Namespace: "close"})
	g.Close()
	if _, err := New(Options{Layout: l, Node: a.Node, Namespace: "close"}); !errors.Is(err, ErrInUse) {
		t.Errorf("closing the first generator released the value another one holds: %v", err)
	}
	other.Close()
}

// A Lane taken before the first grant refuses like Next, and issues once granted.
func TestManagedLaneBeforeGrant(t *testing.T) {
	f := clock.NewFake(t0)
	g := newManaged(t, Options{Layout: lay(t, "twitter"), Clock: f, Lanes: 2})
	lane := g.Lane()
	if _, err := lane.Next(bg); !errors.Is(err, fence.ErrLost) {
		t.Fatalf("Lane.Next before a grant: %v; want the lease-lost error", err)
	}
	if err := g.grant(fence.Grant{Node: layout.NodeValues{0, 3}, Through: ms(t0.Add(time.Hour)), Until: t0.Add(time.Hour).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	if _, err := lane.Next(bg); err != nil {
		t.Fatalf("Lane.Next after a grant: %v", err)
	}
}

// The link package lease uses: a generator made with a Fence from fence.New is
// managed and fence.TargetOf finds its target; a Fence is taken once, and only
// by a generator that New accepts; a zero Fence, which code outside the module
// can make, is refused.
func TestFence(t *testing.T) {
	f := fence.New()
	if _, err := New(Options{Namespace: t.Name(), Node: layout.NodeValues{0, 1}, Fence: f}); err == nil {
		t.Fatal("New accepted a Fence with a Node")
	}
	g := newGen(t, Options{Fence: f})
	tg := fence.TargetOf(g)
	if !g.managed || tg == nil {
		t.Fatal("a generator made with a Fence is not managed, or has no fence target")
	}
	far := fence.Grant{Node: layout.NodeValues{0, 1}, Through: ms(time.Now().Add(time.Hour)), Until: time.Now().Add(time.Hour).UnixNano()}
	if err := tg.Grant(far); err != nil {
		t.Fatal(err)
	}
	next(t, g)
	for name, f := range map[string]*fence.Fence{"taken": f, "zero": new(fence.Fence)} {
		if g2, err := New(Options{Namespace: t.Name() + name, Fence: f}); err == nil {
			g2.Close()
			t.Errorf("New accepted a %s Fence", name)
		}
	}
	if fence.TargetOf(newGen(t, Options{Namespace: t.Name() + "plain"})) != nil {
		t.Error("a generator made without a Fence has a fence target: a lease could feed it")
	}
}

// Before its first grant a managed generator refuses in every contention variant,
// also in the epoch's first tick, where the zero state word of the node that
// stands in for the missing grant is a state the fast path could add to.
func TestManagedBeforeGrantAtEpoch(t *testing.T) {
	for _, c := range variants {
		t.Run(c.String(), func(t *testing.T) {
			f := clock.NewFake(t0.Add(100 * time.Microsecond))
			o := Options{Layout: lay(t, "time:41:1ms:2026-11-22T12:00:00Z,worker:10,seq:12"), Clock: f}
			g := newGenWith(t, o, c, true)
			for i := range 3 {
				if id, err := g.Next(bg); !errors.Is(err, fence.ErrLost) {
					t.Fatalf("call %d before a grant, in the epoch's first tick: %d, %v; want the lease-lost error", i, id, err)
				}
			}
		})
	}
}
