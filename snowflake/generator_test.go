package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

var bg = context.Background()

func lay(t testing.TB, s string) *layout.Layout {
	t.Helper()
	l, err := layout.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newGen(t testing.TB, o Options) *Generator {
	t.Helper()
	if o.Namespace == "" {
		o.Namespace = t.Name()
	}
	g, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// variants are the contention variants every property test runs against.
var variants = []contention{contendAdd, contendMutex, contendHybrid}

func (c contention) String() string {
	return [...]string{"add", "mutex", "hybrid"}[c]
}

// newGenVariant is newGen with contention variant c.
func newGenVariant(t testing.TB, o Options, c contention) *Generator {
	return newGenWith(t, o, c, false)
}

// newManaged is newGen for a managed generator, as lease.NewGenerator makes one.
func newManaged(t testing.TB, o Options) *Generator {
	return newGenWith(t, o, defaultContention, true)
}

func newGenWith(t testing.TB, o Options, c contention, managed bool) *Generator {
	t.Helper()
	if o.Namespace == "" {
		o.Namespace = t.Name()
	}
	if managed {
		o.Fence = fence.New()
	}
	g, err := newGenerator(o, c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func next(t testing.TB, g *Generator) flurry.ID {
	t.Helper()
	id, err := g.Next(bg)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return id
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestZeroOptions(t *testing.T) {
	g := newGen(t, Options{})
	before := time.Now()
	a, b := next(t, g), next(t, g)
	after := time.Now()
	if b <= a {
		t.Fatalf("%d then %d", a, b)
	}
	if g.Layout().Name() != "twitter" {
		t.Errorf("default layout %s", g.Layout().Name())
	}
	// The system clock: the ID's time is when it was made, to the unit, however
	// long the calls took.
	if at := g.Layout().TimeOf(b); at.After(after) || at.Before(before.Add(-time.Second)) {
		t.Errorf("ID time %v, made between %v and %v", at, before, after)
	}
}

func TestNodeValuesInID(t *testing.T) {
	l := lay(t, "gameserver")
	g := newGen(t, Options{Layout: l, Node: layout.NodeValues{5, 2000, 31}})
	p, err := l.Decompose(next(t, g))
	if err != nil || p.Nodes != (layout.NodeValues{5, 2000, 31}) {
		t.Fatalf("decomposed %+v, %v", p, err)
	}
	if _, err := New(Options{Layout: l, Node: layout.NodeValues{8}}); !errors.Is(err, layout.ErrInvalid) || !strings.Contains(err.Error(), "platform 8 does not fit in 3 bits (0..7)") {
		t.Errorf("out-of-range node: %v", err)
	}
}

func TestOptionErrors(t *testing.T) {
	l := lay(t, "twitter")
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Lanes: 3}, "power of two"},
		{Options{Lanes: 8192}, "power of two"},
		{Options{Overflow: Borrow, MaxDrift: 100 * time.Microsecond}, "shorter than one"},
		{Options{MaxDrift: -1}, "negative"},
		{Options{Behind: SwitchNode}, "at least one Standby"},
		{Options{Standby: []layout.NodeValues{{1}}}, "only used by the SwitchNode"},
		{Options{Behind: SwitchNode, Standby: []layout.NodeValues{{0, 0}}}, "listed twice"},
		{Options{Behind: SwitchNode, Standby: []layout.NodeValues{{99}}}, "standby node value 1"},
		{Options{Start: StartRandom, RandomBelow: -1}, "negative"},
		{Options{Overflow: 9}, "unknown overflow"},
		{Options{MaxDrift: time.Second}, "only the Borrow and Logical"},
		{Options{RandomBelow: 10}, "only StartRandom"},
	} {
		tc.o.Layout = l
		g, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
		if g != nil {
			g.Close()
		}
	}
}

// Two generator instances of one node in one process would issue the same IDs.
func TestInProcessGuard(t *testing.T) {
	tw, leaf := lay(t, "twitter"), lay(t, "leaf")
	g1, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 3}}); !errors.Is(err, ErrInUse) {
		t.Errorf("second generator for one node: %v", err)
	}
	// Leaf's worker 3 is Twitter's datacenter 0 worker 3: the same bits.
	if _, err := New(Options{Layout: leaf, Node: layout.NodeValues{3}}); !errors.Is(err, ErrInUse) {
		t.Errorf("same bits under another layout name: %v", err)
	}
	other, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 3}, Namespace: "mail"})
	if err != nil {
		t.Errorf("another namespace refused: %v", err)
	} else {
		other.Close()
	}
	// A standby value is guarded like a primary one, and a failed New frees what it took.
	if _, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 4}, Behind: SwitchNode, Standby: []layout.NodeValues{{0, 3}}}); !errors.Is(err, ErrInUse) {
		t.Errorf("standby clash: %v", err)
	}
	g4, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 4}})
	if err != nil {
		t.Errorf("failed New left node 4 taken: %v", err)
	} else {
		g4.Close()
	}
	g1.Close()
	g1.Close()
	if _, err := g1.Next(bg); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	g2, err := New(Options{Layout: tw, Node: layout.NodeValues{0, 3}})
	if err != nil {
		t.Fatalf("node not released by Close: %v", err)
	}
	g2.Close()
}

// Next refuses once Close returns, also when the lane's last ID is in the clock's
// tick with values left, the case the fast path serves without looking at closed.
func TestCloseRefusesOnFastPath(t *testing.T) {
	for _, c := range variants {
		for _, managed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/managed=%v", c, managed), func(t *testing.T) {
				f := clock.NewFake(t0)
				o := Options{Layout: lay(t, "twitter"), Clock: f, Lanes: 2}
				if !managed {
					o.Node = layout.NodeValues{1, 2}
				}
				g := newGenWith(t, o, c, managed)
				if managed {
					far := t0.Add(time.Hour)
					if err := g.grant(fence.Grant{Node: layout.NodeValues{1, 2}, Through: far.UnixMilli(), Until: far.UnixNano()}); err != nil {
						t.Fatal(err)
					}
				}
				lane := g.Lane()
				for range 3 { // the first opens the tick, the others take the fast path
					next(t, g)
					if _, err := lane.Next(bg); err != nil {
						t.Fatal(err)
					}
				}
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := g.Next(bg); !errors.Is(err, ErrClosed) {
					t.Errorf("Next after Close: %v", err)
				}
				if _, err := lane.Next(bg); !errors.Is(err, ErrClosed) {
					t.Errorf("Lane.Next after Close: %v", err)
				}
				if _, err := g.NextN(bg, make([]flurry.ID, 3)); !errors.Is(err, ErrClosed) {
					t.Errorf("NextN after Close: %v", err)
				}
			})
		}
	}
}

// A grant that moves the reservation's end (Through) below the tick in use stops
// the generator at once: also the calls that the fast path serves, which issue in a
// tick that a call before them opened.
func TestLowerThroughStopsFastPath(t *testing.T) {
	for _, c := range variants {
		t.Run(c.String(), func(t *testing.T) {
			f := clock.NewFake(t0)
			g := newGenWith(t, Options{Layout: lay(t, "twitter"), Clock: f}, c, true)
			node := layout.NodeValues{1, 2}
			gr := fence.Grant{Node: node, Through: t0.Add(10 * time.Second).UnixMilli(), Until: t0.Add(time.Hour).UnixNano()}
			if err := g.grant(gr); err != nil {
				t.Fatal(err)
			}
			next(t, g)
			next(t, g)
			gr.Through = t0.Add(-time.Second).UnixMilli()
			if err := g.grant(gr); err != nil {
				t.Fatal(err)
			}
			if id, err := g.Next(bg); !errors.Is(err, fence.ErrLost) {
				t.Errorf("Next in the tick in use after Through moved below it: %v, %v", id, err)
			}
		})
	}
}

func TestOverflowWait(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f})
	ids := make([]flurry.ID, 3*4096+10)
	for i := range ids {
		ids[i] = next(t, g)
	}
	start := l.TickOf(t0)
	for i, id := range ids {
		p, _ := l.Decompose(id)
		if wantTick := start + int64(i/4096); p.Tick != wantTick || p.Sequence != int64(i%4096) {
			t.Fatalf("ID %d: tick %d seq %d, want tick %d seq %d", i, p.Tick, p.Sequence, wantTick, i%4096)
		}
	}
	slept, n := f.Slept()
	if n != 3 || slept != 3*time.Millisecond {
		t.Errorf("slept %v in %d sleeps, want 3ms in 3", slept, n)
	}
	if s := g.Stats(); s.OverflowWaits != 3 || s.Borrowed != 0 {
		t.Errorf("stats %+v", s)
	}
	// Wait never issues ahead of the clock.
	if last := l.TimeOf(ids[len(ids)-1]); last.After(f.Time()) {
		t.Errorf("ID at %v is ahead of the clock at %v", last, f.Time())
	}
}

func TestBorrowBoundedByMaxDrift(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f, Overflow: Borrow, MaxDrift: 5 * time.Millisecond})
	var last flurry.ID
	for i := 0; i < 20*4096; i++ {
		id := next(t, g)
		if id <= last {
			t.Fatalf("not increasing")
		}
		last = id
		if ahead := l.TimeOf(id).Sub(f.Time()); ahead > 5*time.Millisecond {
			t.Fatalf("ID %d is %v ahead of the clock, more than MaxDrift", i, ahead)
		}
	}
	s := g.Stats()
	if s.Borrowed == 0 || s.MaxDriftSeen != 5*time.Millisecond {
		t.Errorf("stats %+v: want borrowing up to 5ms", s)
	}
	// The clock stood still: 6 ticks (now + 5 borrowed) per 1 ms slept.
	if slept, _ := f.Slept(); slept != time.Duration(20-6)*time.Millisecond {
		t.Errorf("slept %v, want 14ms", slept)
	}
}

func TestClockBehindWaitsForShortGaps(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f, WaitThreshold: 10 * time.Millisecond})
	a := next(t, g)
	f.Add(-8 * time.Millisecond)
	b := next(t, g)
	if b <= a {
		t.Fatalf("%d then %d after a short step back", a, b)
	}
	if slept, _ := f.Slept(); slept < 8*time.Millisecond || slept > 9*time.Millisecond {
		t.Errorf("slept %v, want about the 8ms gap", slept)
	}
}

func TestClockBehindFails(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f})
	a := next(t, g)
	f.Add(-time.Second)
	_, err := g.Next(bg)
	var cb *ClockBehindError
	if !errors.Is(err, ErrClockBehind) || !errors.As(err, &cb) || cb.Gap < time.Second-time.Millisecond || cb.Gap > time.Second {
		t.Fatalf("err = %v (%+v), want ClockBehindError with a 1s gap", err, cb)
	}
	if !strings.Contains(err.Error(), "refusing to issue until it catches up") {
		t.Errorf("message does not say what happens: %v", err)
	}
	f.Add(time.Second + time.Millisecond)
	if b := next(t, g); b <= a {
		t.Errorf("after recovery %d <= %d", b, a)
	}
	if s := g.Stats(); s.BehindErrors != 1 || s.MaxBehind < 990*time.Millisecond {
		t.Errorf("stats %+v", s)
	}
	// A negative threshold fails even a 1 ms step at once.
	f2 := clock.NewFake(t0)
	g2 := newGen(t, Options{Layout: l, Clock: f2, WaitThreshold: -1, Namespace: "neg"})
	next(t, g2)
	f2.Add(-2 * time.Millisecond)
	if _, err := g2.Next(bg); !errors.Is(err, ErrClockBehind) {
		t.Errorf("negative threshold: %v", err)
	}
}

func TestClockBehindLogical(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f, Behind: Logical, MaxDrift: time.Second})
	last := next(t, g)
	f.Add(-500 * time.Millisecond)
	for i := 0; i < 3*4096; i++ { // spans ticks: the logical clock advances by waiting
		id := next(t, g)
		if id <= last {
			t.Fatalf("logical clock issued %d after %d", id, last)
		}
		last = id
	}
	// Three ticks used up, each taking the next tick without waiting: 503 ms ahead.
	if ahead := l.TimeOf(last).Sub(f.Time()); ahead != 503*time.Millisecond {
		t.Errorf("logical IDs %v ahead, want 503ms", ahead)
	}
	if slept, _ := f.Slept(); slept != 0 {
		t.Errorf("logical clock slept %v", slept)
	}
	f.Add(-2 * time.Second) // beyond MaxDrift
	if _, err := g.Next(bg); !errors.Is(err, ErrClockBehind) {
		t.Errorf("gap beyond MaxDrift: %v", err)
	}
}

func TestClockBehindSwitchNode(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "gameserver")
	primary, standby := layout.NodeValues{1, 100, 1}, layout.NodeValues{1, 100, 2}
	g := newGen(t, Options{Layout: l, Clock: f, Node: primary, Behind: SwitchNode, Standby: []layout.NodeValues{standby}})
	seen := map[flurry.ID]bool{}
	for i := 0; i < 100; i++ {
		seen[next(t, g)] = true
	}
	f.Add(-time.Second)
	for i := 0; i < 100; i++ {
		id := next(t, g)
		if seen[id] {
			t.Fatalf("duplicate %d after the switch", id)
		}
		seen[id] = true
		if p, _ := l.Decompose(id); p.Nodes != standby {
			t.Fatalf("ID after the switch has node %v, want the standby %v", p.Nodes, standby)
		}
	}
	if g.Node() != standby || g.Stats().Switches != 1 {
		t.Errorf("node %v, stats %+v", g.Node(), g.Stats())
	}
	// A second step back: the primary's last tick is ahead of the clock too, so no
	// standby is usable and the generator refuses.
	f.Add(-time.Second)
	if _, err := g.Next(bg); !errors.Is(err, ErrClockBehind) {
		t.Errorf("no usable standby: %v", err)
	}
}

func TestSequenceStartRandom(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f, Start: StartRandom, RandomBelow: 10})
	counts := make([]int, 10)
	for i := 0; i < 2000; i++ {
		f.Add(time.Millisecond)
		p, _ := l.Decompose(next(t, g))
		if p.Sequence >= 10 {
			t.Fatalf("start %d not below 10", p.Sequence)
		}
		counts[p.Sequence]++
	}
	for v, c := range counts {
		if c < 120 || c > 280 { // expected 200 each; 5 sigma is about 67
			t.Errorf("start %d drawn %d times of 2000: not even", v, c)
		}
	}
}

func TestSequenceStartContinue(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "gameserver") // 6-bit sequence
	g := newGen(t, Options{Layout: l, Clock: f, Start: StartContinue})
	var seqs []int64
	for i := 0; i < 70; i++ {
		f.Add(time.Millisecond)
		p, _ := l.Decompose(next(t, g))
		seqs = append(seqs, p.Sequence)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != (seqs[i-1]+1)%64 {
			t.Fatalf("sequence %v does not continue across ticks", seqs)
		}
	}
	// Inside one tick it never wraps: from sequence s it issues 64-s IDs, then moves on.
	tickBefore, _ := l.Decompose(next(t, g))
	var last flurry.ID
	for i := 0; i < 200; i++ {
		id := next(t, g)
		if id <= last {
			t.Fatalf("wrapped inside a tick: %d after %d", id, last)
		}
		last = id
	}
	if p, _ := l.Decompose(last); p.Tick <= tickBefore.Tick {
		t.Errorf("did not move to later ticks")
	}
}

func TestExhaustedAndWarning(t *testing.T) {
	epoch := time.Now().Add(-time.Minute).Truncate(time.Second)
	l := lay(t, "time:7:1s:"+epoch.UTC().Format(time.RFC3339)+",seq:4") // 128 s of life
	f := clock.NewFake(epoch.Add(100 * time.Second))
	var calls int
	var left time.Duration
	g := newGen(t, Options{Layout: l, Clock: f, WarnBefore: 20 * time.Second, OnLifeLow: func(d time.Duration, end time.Time) {
		calls++
		left = d
		if !end.Equal(epoch.Add(128 * time.Second)) {
			t.Errorf("end %v", end)
		}
	}})
	if calls != 0 {
		t.Fatalf("warned %d times before the window", calls)
	}
	next(t, g)
	f.Set(epoch.Add(110 * time.Second))
	next(t, g)
	next(t, g)
	if calls != 1 || left != 18*time.Second {
		t.Errorf("warning called %d times with %v left; want once with 18s", calls, left)
	}
	f.Set(epoch.Add(127 * time.Second))
	var last flurry.ID
	var err error
	for i := 0; i < 100 && err == nil; i++ { // 16 per tick, then the next tick is past the end
		var id flurry.ID
		id, err = g.Next(bg)
		if err == nil {
			if id < 0 || id <= last {
				t.Fatalf("bad ID %d near exhaustion", id)
			}
			last = id
		}
	}
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	if p, _ := l.Decompose(last); p.Tick != 127 || p.Sequence != 15 {
		t.Errorf("last ID %+v, want tick 127 seq 15", p)
	}
	// The baidu preset ran out in 2024: New refuses it on the real clock.
	if _, err := New(Options{Layout: lay(t, "baidu")}); !errors.Is(err, ErrExhausted) {
		t.Errorf("baidu: %v", err)
	}
	// A warning inside the window at New is given at once.
	calls = 0
	f.Set(epoch.Add(110 * time.Second))
	g2 := newGen(t, Options{Layout: l, Clock: f, Namespace: "w2", OnLifeLow: func(time.Duration, time.Time) { calls++ }})
	_ = g2
	if calls != 1 {
		t.Errorf("New inside the default window warned %d times", calls)
	}
}

func TestBeforeEpoch(t *testing.T) {
	f := clock.NewFake(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := New(Options{Clock: f}); !errors.Is(err, ErrBeforeEpoch) {
		t.Errorf("clock before epoch: %v", err)
	}
}

func TestNextN(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f})
	first := next(t, g)
	dst := make([]flurry.ID, 10000)
	n, err := g.NextN(bg, dst)
	if err != nil || n != len(dst) {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	prev := first
	for i, id := range dst {
		if id <= prev {
			t.Fatalf("dst[%d] = %d after %d", i, id, prev)
		}
		prev = id
		if _, err := l.Decompose(id); err != nil {
			t.Fatal(err)
		}
	}
	// 1 + 10000 IDs at 4096 per tick span three ticks.
	if p, _ := l.Decompose(dst[len(dst)-1]); p.Tick != l.TickOf(t0)+2 || p.Sequence != 10000-2*4096 {
		t.Errorf("last of batch %+v", p)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	g2 := newGen(t, Options{Layout: l, Clock: f, Namespace: "cancel"})
	n, err = g2.NextN(ctx, make([]flurry.ID, 5000))
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled batch: %d, %v; want none and Canceled", n, err)
	}
}

func TestLanes(t *testing.T) {
	f := clock.NewFake(t0)
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: f, Lanes: 4})
	var mu sync.Mutex
	seen := map[flurry.ID]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		lane := g.Lane()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last flurry.ID
			local := make([]flurry.ID, 0, 5000)
			for i := 0; i < 5000; i++ {
				id, err := lane.Next(bg)
				if err != nil {
					t.Error(err)
					return
				}
				if id <= last {
					t.Errorf("lane %d: %d after %d", lane.idx, id, last)
					return
				}
				last = id
				local = append(local, id)
				if i%1000 == 0 {
					f.Add(time.Millisecond)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("duplicate %d", id)
				}
				seen[id] = true
				if p, _ := l.Decompose(id); p.Sequence>>10 != int64(lane.idx) {
					t.Errorf("lane %d issued sequence %d outside its quarter", lane.idx, p.Sequence)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 20000 {
		t.Errorf("%d distinct IDs, want 20000", len(seen))
	}
}

func TestCoarseClockGenerator(t *testing.T) {
	c := clock.NewCoarse(clock.NewSystem(), time.Millisecond)
	defer c.Close()
	l := lay(t, "twitter")
	g := newGen(t, Options{Layout: l, Clock: c})
	var last flurry.ID
	start := time.Now()
	for i := 0; i < 50000; i++ {
		id := next(t, g)
		if id <= last {
			t.Fatal("not increasing")
		}
		last = id
	}
	end := time.Now()
	// Not ahead of the time it was made, and not far behind the time the loop
	// began (a coarse clock lags by its period; the second is for a busy machine).
	if at := l.TimeOf(last); at.After(end.Add(time.Millisecond)) || at.Before(start.Add(-time.Second)) {
		t.Errorf("coarse-clock ID time %v; the IDs were made between %v and %v", at, start, end)
	}
}

func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	g := newGen(t, Options{Clock: clock.NewFake(t0), Overflow: Borrow, MaxDrift: time.Hour})
	dst := make([]flurry.ID, 64)
	var sink flurry.ID
	if n := testing.AllocsPerRun(10000, func() { sink, _ = g.Next(bg) }); n != 0 {
		t.Errorf("Next allocates %v per call", n)
	}
	if n := testing.AllocsPerRun(1000, func() { g.NextN(bg, dst) }); n != 0 {
		t.Errorf("NextN allocates %v per call", n)
	}
	lane := g.Lane()
	if n := testing.AllocsPerRun(10000, func() { sink, _ = lane.Next(bg) }); n != 0 {
		t.Errorf("Lane.Next allocates %v per call", n)
	}
	_ = sink
}

// staleClock returns queued readings first, as a caller descheduled between reading
// the clock and using the reading would see them, then the real (fake) time.
type staleClock struct {
	*clock.Fake
	mu     sync.Mutex
	queued []int64
}

func (c *staleClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queued) > 0 {
		v := c.queued[0]
		c.queued = c.queued[1:]
		return v
	}
	return c.Fake.Now()
}

// A reading older than the state is not a clock step back: the generator reads the
// clock again before deciding, under every policy.
func TestStaleReadingIsNotClockBehind(t *testing.T) {
	for _, o := range []Options{{}, {Overflow: Borrow, MaxDrift: 5 * time.Millisecond}, {WaitThreshold: -1}} {
		c := &staleClock{Fake: clock.NewFake(t0)}
		o.Clock, o.Namespace = c, t.Name()+o.Overflow.String()+fmt.Sprint(o.WaitThreshold)
		g := newGen(t, o)
		a := next(t, g)
		c.Add(time.Second)
		b := next(t, g)
		c.mu.Lock()
		c.queued = []int64{t0.Add(-time.Second).UnixNano()} // read 2 s ago
		c.mu.Unlock()
		d, err := g.Next(bg)
		if err != nil || d <= b || b <= a {
			t.Errorf("%+v: stale reading gave %d, %v (after %d, %d)", o, d, err, a, b)
		}
		if s := g.Stats(); s.ClockBehind != 0 {
			t.Errorf("%+v: a stale reading counted as the clock behind: %+v", o, s)
		}
	}
}

// The fetch-and-add fast path needs guard bits above the sequence; layouts without
// room for them use compare-and-swap alone, and both issue unique, ordered IDs.
func TestFastPathGuardBits(t *testing.T) {
	for _, tc := range []struct {
		layout          string
		fast, stateIsID bool
	}{{"twitter", true, true}, {"gameserver", true, true}, {"mastodon", false, false},
		{"time:46:1ms:2020-01-01T00:00:00Z,seq:16", true, false},
		// The sequence above the machine ID: the state word is not the ID.
		{"sonyflake", true, false},
		// 53 bits: the state's tick moves down to the ID's time field.
		{"jssafe", true, true},
		// Too few bits below the time field for the guard bits there.
		{"time:41:1ms:2020-01-01T00:00:00Z,seq:12", true, false}} {
		for _, c := range variants {
			l := lay(t, tc.layout)
			f := clock.NewFake(t0)
			g := newGenVariant(t, Options{Layout: l, Clock: f, Namespace: tc.layout + c.String()}, c)
			if fast := g.fastSeq != 0; fast != tc.fast || g.stateIsID != tc.stateIsID {
				t.Errorf("%s: fast path %v, state is the ID %v; want %v, %v", tc.layout, fast, g.stateIsID, tc.fast, tc.stateIsID)
			}
			var mu sync.Mutex
			seen := map[flurry.ID]bool{}
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var last flurry.ID
					for i := 0; i < 3000; i++ {
						id, err := g.Next(bg)
						if err != nil {
							t.Error(err)
							return
						}
						if id <= last {
							t.Errorf("%s: %d after %d", tc.layout, id, last)
							return
						}
						last = id
						mu.Lock()
						if seen[id] {
							t.Errorf("%s: duplicate %d", tc.layout, id)
						}
						seen[id] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		}
	}
}

// The hybrid going back to lock-free after its hold must not reopen a fence that
// ended while the lane was serialised: the serialisation and the fence share the
// lane's fast word. With a one-second tick, the ID after the hold would be in the
// same tick as the ones before Close, so only the fence stops the fast path.
func TestHybridUnholdKeepsEndedFence(t *testing.T) {
	for _, managed := range []bool{false, true} {
		t.Run(fmt.Sprintf("managed=%v", managed), func(t *testing.T) {
			f := clock.NewFake(t0.Truncate(time.Second).Add(100 * time.Millisecond))
			o := Options{Layout: lay(t, "time:32:1s:2024-01-01T00:00:00Z,worker:10,seq:21"), Clock: f}
			if !managed {
				o.Node = layout.NodeValues{1}
			}
			g := newGenWith(t, o, contendHybrid, managed)
			if managed {
				far := t0.Add(time.Hour)
				if err := g.grant(fence.Grant{Node: layout.NodeValues{1}, Through: far.UnixMilli(), Until: far.UnixNano()}); err != nil {
					t.Fatal(err)
				}
			}
			next(t, g)
			ln := g.active.Load()
			g.contended(ln, f.Now()) // as if two CPUs had added at once
			next(t, g)               // under the lane's mutex
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			f.Add(time.Duration(2 * hybridHold)) // the hold ends; still the same tick
			for i := range 3 {
				if _, err := g.Next(bg); !errors.Is(err, ErrClosed) {
					t.Fatalf("call %d after Close, past the hybrid's hold: %v, want ErrClosed", i, err)
				}
			}
			if ln.fast.Load() != 0 {
				t.Fatalf("lane's fast word after the hold %d, want 0 (lock-free, fence ended)", ln.fast.Load())
			}
		})
	}
}

// fenceLimit saturates instead of overflowing, and closes for a fence in the past.
func TestFenceLimit(t *testing.T) {
	g := newGenWith(t, Options{Layout: lay(t, "twitter"), Clock: clock.NewFake(t0), Node: layout.NodeValues{1, 2}}, contendAdd, false)
	unit := g.unitNs
	for _, c := range []struct {
		until, through, want int64
	}{
		{math.MaxInt64, g.maxTick, (g.maxTick + 1) * unit},
		{math.MinInt64, g.maxTick, 0},
		{g.epochNs, 5, 0},
		{g.epochNs + 10*unit, 5, 6 * unit},
		{g.epochNs + 3*unit + 1, 5, 3*unit + 1},
		{math.MaxInt64, -1, 0},
		{math.MaxInt64, math.MaxInt64 / unit, math.MaxInt64 - g.epochNs},
	} {
		if got := g.fenceLimit(c.until, c.through); got != c.want {
			t.Errorf("fenceLimit(%d, %d) = %d, want %d", c.until, c.through, got, c.want)
		}
	}
	g.epochNs = -g.epochNs // an epoch before 1970
	if got := g.fenceLimit(math.MaxInt64, math.MaxInt64/unit); got != math.MaxInt64 {
		t.Errorf("fenceLimit with an epoch before 1970 = %d, want MaxInt64", got)
	}
}
