package redisgen

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
)

// commands is a go-redis hook that counts the commands a client sends, by name,
// and can call a function after a HINCRBY's reply arrives (before the caller sees
// it): how these tests make a reply late on the Generator's manual clock.
type commands struct {
	mu          sync.Mutex
	n           map[string]int
	afterIncr   func(reply int64)
	afterScript func()
}

func (h *commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		name := strings.ToLower(cmd.Name())
		h.mu.Lock()
		if h.n == nil {
			h.n = map[string]int{}
		}
		h.n[name]++
		after, afterScript := h.afterIncr, h.afterScript
		h.mu.Unlock()
		if c, ok := cmd.(*redis.Cmd); ok && name == "hincrby" && after != nil && err == nil {
			v, _ := c.Int64()
			after(v)
		}
		if (name == "evalsha" || name == "eval") && afterScript != nil {
			afterScript()
		}
		return err
	}
}

func (h *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// counts returns how many script calls and plain HINCRBYs were sent.
func (h *commands) counts() (scripts, plain int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n["evalsha"], h.n["hincrby"] // a NOSCRIPT EVALSHA is followed by an EVAL
}

// rig is a twitter Generator on the test Redis with its node values set, a
// manual clock for its window, a count of the commands its client sends (from
// after SetNode) and its log.
type rig struct {
	c    *redis.Client
	h    *commands
	l    *layout.Layout
	ns   string
	ctx  context.Context
	m    *clock.Manual
	logs *syncBuffer
	g    *Generator
}

func newRig(t *testing.T, nv layout.NodeValues) *rig {
	t.Helper()
	r := &rig{c: newClient(t), h: &commands{}, l: mustLayout(t, "twitter"), ctx: testCtx(t),
		m: clock.NewManual(time.Now()), logs: &syncBuffer{}}
	r.c.AddHook(r.h)
	r.ns = freshNamespace(t, r.c)
	r.g = newGen(t, Options{Client: r.c, Namespace: r.ns, Layout: r.l, Clock: r.m, Logger: slog.New(slog.NewTextHandler(r.logs, nil))})
	if err := r.g.SetNode(r.ctx, nv); err != nil {
		t.Fatal(err)
	}
	r.h.mu.Lock()
	r.h.n = nil // SetNode runs a script of its own
	r.h.mu.Unlock()
	return r
}

// TestPlainPath: after a script call, Next takes IDs with one HINCRBY for
// PlainWindow on the Generator's clock; one goroutine runs the script in the
// last quarter of the window; a reply that arrives after the window is not taken
// (its slot is burned and the script issues instead); a negative PlainWindow
// turns the plain path off.
func TestPlainPath(t *testing.T) {
	r := newRig(t, layout.NodeValues{4, 5})
	h, l, ns, ctx, m, g := r.h, r.l, r.ns, r.ctx, r.m, r.g
	seen := map[flurry.ID]bool{}
	var last flurry.ID
	next := func() layout.Parts {
		t.Helper()
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || id <= last {
			t.Fatalf("ID %d after %d: repeated or not increasing", id, last)
		}
		seen[id], last = true, id
		p, err := l.Decompose(id)
		if err != nil || p.Nodes != (layout.NodeValues{4, 5}) {
			t.Fatalf("ID %d decodes to %+v, %v", id, p, err)
		}
		return p
	}
	want := func(scripts, plain int, when string) {
		t.Helper()
		if s, p := h.counts(); s != scripts || p != plain {
			t.Fatalf("%s: %d script calls and %d HINCRBYs; want %d and %d", when, s, p, scripts, plain)
		}
	}
	first := next()
	for range 99 {
		if p := next(); p.Tick != first.Tick {
			t.Fatalf("plain ID %+v outside the confirmed tick %d", p, first.Tick)
		}
	}
	want(1, 99, "100 IDs within one window")

	unit := DefaultPlainWindow // the twitter layout's unit is shorter
	m.Add(unit - unit/4)       // three quarters of the window: one goroutine renews it
	next()
	want(2, 99, "the first call in the last quarter of the window")
	next()
	want(2, 100, "after the early script call")

	m.Add(2 * unit) // past the window: the script again
	next()
	want(3, 100, "after the window")

	// A reply that arrives after the window is not taken.
	var burned int64
	h.mu.Lock()
	h.afterIncr = func(v int64) {
		burned = v - 1
		m.Add(2 * unit)
	}
	h.mu.Unlock()
	p := next()
	h.mu.Lock()
	h.afterIncr = nil
	h.mu.Unlock()
	want(4, 101, "a late plain reply")
	if slot := p.Tick*4096 + p.Sequence; slot == burned {
		t.Fatalf("the late reply's slot %d was issued", burned)
	}

	// A negative PlainWindow: every call is a script call.
	h2 := &commands{}
	c2 := newClient(t)
	c2.AddHook(h2)
	g2 := newGen(t, Options{Client: c2, Namespace: ns, Layout: l, Clock: m, PlainWindow: -1})
	for range 20 {
		if _, err := g2.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if s, p := h2.counts(); s != 20 || p != 0 {
		t.Fatalf("PlainWindow -1: %d script calls and %d HINCRBYs for 20 IDs", s, p)
	}
}

// TestPlainPathRenewLead: the script call that renews the window comes a quarter
// of the window before its end after a quick script call, and earlier, up to half
// the window, after a slow one (four times its round trip): a plain call still
// goes out at five eighths of the window after a script call that took no time on
// the Generator's clock, and the renewal comes at half the window after one that
// took a quarter of it, or while another goroutine's plain call is in flight.
func TestPlainPathRenewLead(t *testing.T) {
	r := newRig(t, layout.NodeValues{4, 6})
	h, ctx, m, g := r.h, r.ctx, r.m, r.g
	unit := DefaultPlainWindow
	want := func(scripts, plain int, when string) {
		t.Helper()
		if _, err := g.Next(ctx); err != nil {
			t.Fatal(err)
		}
		if s, p := h.counts(); s != scripts || p != plain {
			t.Fatalf("%s: %d script calls and %d HINCRBYs; want %d and %d", when, s, p, scripts, plain)
		}
	}
	want(1, 0, "the first call")
	m.Add(unit/2 + unit/8)
	want(1, 1, "five eighths into the window of a quick script call")
	m.Add(unit / 8)
	h.mu.Lock()
	h.afterScript = func() { m.Add(unit / 4) } // this script call takes a quarter of the window
	h.mu.Unlock()
	want(2, 1, "three quarters into the window")
	h.mu.Lock()
	h.afterScript = nil
	h.mu.Unlock()
	want(2, 2, "a quarter into the window of a slow script call")
	m.Add(unit / 4)
	want(3, 2, "half the window after a script call that took a quarter of it")

	// While another plain call is in flight, the renewal comes at half the
	// window: here a call made while the hook holds a plain call's reply.
	r2 := newRig(t, layout.NodeValues{4, 7})
	if _, err := r2.g.Next(r2.ctx); err != nil {
		t.Fatal(err)
	}
	r2.m.Add(unit/2 + unit/8)
	var inner [2]int
	r2.h.mu.Lock()
	r2.h.afterIncr = func(int64) {
		r2.h.mu.Lock()
		r2.h.afterIncr = nil
		r2.h.mu.Unlock()
		if _, err := r2.g.Next(r2.ctx); err != nil {
			t.Error(err)
		}
		inner[0], inner[1] = r2.h.counts()
	}
	r2.h.mu.Unlock()
	if _, err := r2.g.Next(r2.ctx); err != nil {
		t.Fatal(err)
	}
	if inner != [2]int{2, 1} {
		t.Fatalf("a call five eighths into the window with another plain call in flight: %d script calls and %d HINCRBYs in all; want 2 and 1", inner[0], inner[1])
	}
}

// TestPlainPathOtherServer: a client whose connection moves to another Redis (a
// VIP or DNS name that now points elsewhere) while its window is open sends its
// plain HINCRBY there. That server has no counter for the client's node values,
// so the slot it answers is refused; the script then finds the other server's
// node values, and the client issues with them, from that server's counter: no
// ID is issued twice, and none carries the old node values from the new server.
func TestPlainPathOtherServer(t *testing.T) {
	dir := t.TempDir()
	addrA := startServer(t, dir, "a")
	addrB := startServer(t, dir, "b")
	c := redis.NewClient(&redis.Options{Addr: addrA, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	m := clock.NewManual(time.Now())
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, Clock: m})
	if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}
	cb := redis.NewClient(&redis.Options{Addr: addrB})
	t.Cleanup(func() { cb.Close() })
	native := newGen(t, Options{Client: cb, Namespace: ns, Layout: l})
	if err := native.SetNode(ctx, layout.NodeValues{2, 2}); err != nil {
		t.Fatal(err)
	}

	ids := map[flurry.ID]string{}
	add := func(id flurry.ID, who string) {
		t.Helper()
		if other, dup := ids[id]; dup {
			t.Fatalf("ID %d issued to %s and %s", id, other, who)
		}
		ids[id] = who
	}
	for range 50 {
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		add(id, "the client on A")
	}
	// B issues too, so that its counter of node 2,2 stands in the current tick.
	for range 50 {
		id, err := native.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		add(id, "B's own generator")
	}
	// Point the Generator's connection at B, as a moved VIP or DNS name
	// would, within its window (the manual clock does not move).
	moved := redis.NewClient(&redis.Options{Addr: addrB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { moved.Close() })
	g.client = moved

	for i := range 100 {
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := l.Decompose(id)
		if p.Nodes != (layout.NodeValues{2, 2}) {
			t.Fatalf("ID %d from B carries node %v (call %d after the move)", id, p.Nodes, i)
		}
		add(id, "the client moved to B")
		nid, err := native.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		add(nid, "B's own generator")
	}
	// The one plain call that reached B made a counter of node 1,1 that B never
	// had, its slot (near the epoch) was refused, and the script that found B's
	// node values poisoned that counter: plain calls that still reach B with
	// node 1,1 get slots below zero.
	stray, err := cb.HGet(ctx, lastKey(ns), g.params.counterField([]string{"1", "1"})).Result()
	if err != nil || stray != poisoned {
		t.Fatalf("B's counter of node 1,1: %q, %v; want it poisoned (%s)", stray, err, poisoned)
	}
}

// TestSetNodePoisons: SetNode poisons the counter of the values it replaces, so
// that a plain HINCRBY still sent with them gets a slot below zero (refused by
// every client); the old counter is kept in floor, and when the values come back
// their IDs continue above the old ones.
func TestSetNodePoisons(t *testing.T) {
	r := newRig(t, layout.NodeValues{1, 1})
	c, l, ns, ctx, m, logs, g := r.c, r.l, r.ns, r.ctx, r.m, r.logs, r.g
	var last flurry.ID
	for range 20 {
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	f := g.params.counterField([]string{"1", "1"})
	before, err := c.HGet(ctx, lastKey(ns), f).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetNode(ctx, layout.NodeValues{2, 2}); err != nil {
		t.Fatal(err)
	}
	h, _ := c.HGetAll(ctx, lastKey(ns)).Result()
	if h[f] != poisoned || h["floor"] != itoa(before) {
		t.Fatalf("after SetNode(2, 2) the last key holds %v; want %s poisoned and floor %d", h, f, before)
	}
	// The Generator's window is still open (the manual clock stands): its next
	// plain call gets a slot below zero, refuses it, and the script issues with
	// the new values.
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(id); p.Nodes != (layout.NodeValues{2, 2}) {
		t.Fatalf("ID after SetNode(2, 2) within the window: %+v", p)
	}
	if !strings.Contains(logs.String(), "not this Generator's") {
		t.Errorf("no warning about the poisoned counter:\n%s", logs.String())
	}
	// Setting the same values again poisons nothing.
	if err := g.SetNode(ctx, layout.NodeValues{2, 2}); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.HGet(ctx, lastKey(ns), g.params.counterField([]string{"2", "2"})).Result(); v == poisoned {
		t.Fatal("SetNode with the values the hash holds poisoned their counter")
	}
	// Back to 1,1: its counter restarts from floor, above its old IDs.
	if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}
	m.Add(DefaultPlainWindow)
	id, err = g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(id); p.Nodes != (layout.NodeValues{1, 1}) || id <= last {
		t.Fatalf("ID %d (%+v) with node 1,1 again is not above its last %d", id, p, last)
	}
	// The counter restarted exactly: the next free slot after the ID issued
	// (no arithmetic on the poisoned value, which a double holds only to 256).
	p, _ := l.Decompose(id)
	if v, err := c.HGet(ctx, lastKey(ns), f).Int64(); err != nil || v <= before || v != p.Tick*4096+p.Sequence+1 {
		t.Fatalf("node 1,1's counter after it came back: %d, %v; want %d, above %d", v, err, p.Tick*4096+p.Sequence+1, before)
	}
}

// v1Client runs the script of the first counter format (one counter for every
// node value), as a process that was not upgraded would.
type v1Client struct {
	c      redis.UniversalClient
	script *redis.Script
	keys   []string
	p      scriptParams
	mask   flurry.ID
}

func newV1Client(t testing.TB, c redis.UniversalClient, ns string, l *layout.Layout, nv layout.NodeValues) *v1Client {
	t.Helper()
	p, err := paramsOf(l)
	if err != nil {
		t.Fatal(err)
	}
	var raw []string
	for i := range p.nodes {
		raw = append(raw, itoa(nv[i]))
	}
	mask, err := p.codec.NodeMask(nv)
	if err != nil {
		t.Fatal(err)
	}
	return &v1Client{c: c, script: redis.NewScript(v1IssueScript(p, raw, false)),
		keys: []string{nodeKey(ns), lastKey(ns)}, p: p, mask: flurry.ID(mask)}
}

// next issues one ID, or returns the status the script answered with.
func (o *v1Client) next(ctx context.Context) (flurry.ID, int64, error) {
	v, err := o.script.Run(ctx, o.c, o.keys, 1).Result()
	if err != nil {
		return 0, 0, err
	}
	r, err := parseReply(v, &o.p, 1)
	if err != nil || r.status != statusIssued {
		return 0, r.status, err
	}
	return flurry.ID(r.tick)<<o.p.timeShift | o.mask | flurry.ID(r.seq)<<o.p.seqShift, 0, nil
}

// TestMigrateFromV1: a namespace of the first counter format moves to the
// per-node-value counters on the first call of a new client, which continues
// from the old counter (here 3000 ticks ahead of Redis's clock) and keeps it as
// the floor of every counter; the old script is refused from then on.
func TestMigrateFromV1(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	nv := layout.NodeValues{2, 9}
	if err := c.HSet(ctx, nodeKey(ns), "datacenter", 2, "worker", 9).Err(); err != nil {
		t.Fatal(err)
	}
	old := newV1Client(t, c, ns, l, nv)
	if _, status, err := old.next(ctx); err != nil || status != 0 {
		t.Fatalf("v1 script: status %d, %v", status, err)
	}
	p, _ := paramsOf(l)
	ahead := redisTick(t, c, l) + 3000
	if err := c.HSet(ctx, lastKey(ns), p.counterFieldV1(), ahead*4096+4001).Err(); err != nil {
		t.Fatal(err)
	}
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: -1})
	_, err := g.Next(ctx)
	if cb, ok := errors.AsType[*ClockBehindError](err); !ok || cb.LastTick != ahead {
		t.Fatalf("first Next after the v1 counter: %v; want a *ClockBehindError at the old last tick %d", err, ahead)
	}
	h, err := c.HGetAll(ctx, lastKey(ns)).Result()
	if err != nil {
		t.Fatal(err)
	}
	f := p.counterField([]string{"2", "9"})
	if _, ok := h[p.counterFieldV1()]; ok || h["layout"] != p.marker() || h[f] != itoa(ahead*4096+4001) || h["floor"] != itoa(ahead*4096+4001) {
		t.Fatalf("after migration the last key holds %v", h)
	}
	if _, status, err := old.next(ctx); err != nil || status != statusLayout {
		t.Fatalf("v1 script after migration: status %d, %v; want the layout mismatch %d", status, err, statusLayout)
	}
	// Another node value's counter starts at the floor, not below it.
	if err := c.HSet(ctx, nodeKey(ns), "worker", 10).Err(); err != nil {
		t.Fatal(err)
	}
	g2 := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: -1})
	if _, err := g2.Next(ctx); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("a new node value's first Next below the floor: %v; want ErrClockBehind", err)
	}
}

// TestV1AndNewClients runs the first counter format's script and new generators
// (plain path on) on one namespace at once: the first new call migrates, the old
// clients are refused from then on, and no ID is issued twice.
func TestV1AndNewClients(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	nv := layout.NodeValues{5, 6}
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: time.Second})
	if err := g.SetNode(ctx, nv); err != nil {
		t.Fatal(err)
	}
	old := newV1Client(t, c, ns, l, nv)
	// The old client issues first, so that the namespace is in the v1 format
	// when the new one begins.
	if _, status, err := old.next(ctx); err != nil || status != 0 {
		t.Fatalf("v1 script: status %d, %v", status, err)
	}
	n, refused := mixOldAndNew(t, ctx, g, old.next, 500)
	if _, status, err := old.next(ctx); err != nil || status != statusLayout {
		t.Fatalf("v1 script after the new clients: status %d, %v; want the layout mismatch", status, err)
	}
	t.Logf("%d IDs, %d old calls refused", n, refused)
}

// TestPlainPathCounterWentBack: a counter found below the tick confirmed before
// the call was sent (a failover to a replica that lacks the last writes, within
// the window) is not the confirmed counter: the slot is refused, the script
// issues from TIME, and the plain path stays off for a while, with one warning.
func TestPlainPathCounterWentBack(t *testing.T) {
	r := newRig(t, layout.NodeValues{3, 3})
	c, h, l, ns, ctx, logs, g := r.c, r.h, r.l, r.ns, r.ctx, r.logs, r.g
	seen := map[flurry.ID]bool{}
	next := func() flurry.ID {
		t.Helper()
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("ID %d issued twice", id)
		}
		seen[id] = true
		return id
	}
	first := next()
	var last flurry.ID
	for range 10 {
		last = next()
	}
	// The counter goes back 5 s: the "replica" lacks the last writes, and its
	// TIME is past them (as after any failover, which takes longer than a tick):
	// wait for Redis TIME to leave the last ID's tick, which a fast machine
	// issues all eleven IDs in.
	lp, _ := l.Decompose(last)
	for redisTick(t, c, l) <= lp.Tick {
		time.Sleep(time.Millisecond)
	}
	fp, _ := l.Decompose(first)
	setLast(t, c, ns, l, fp.Tick-5000, 0)
	h.mu.Lock()
	h.n = nil
	h.mu.Unlock()
	id := next()
	if p, _ := l.Decompose(id); p.Tick < fp.Tick {
		t.Fatalf("ID %+v after the counter went back: below the first ID's tick %d", p, fp.Tick)
	}
	if s, p := h.counts(); s != 1 || p != 1 {
		t.Fatalf("the call after the counter went back: %d script calls and %d HINCRBYs; want 1 and 1", s, p)
	}
	for range 5 {
		next()
	}
	if s, p := h.counts(); s != 6 || p != 1 {
		t.Fatalf("5 calls after a foreign reply: %d script calls and %d HINCRBYs in all; want 6 and 1 (plain path off)", s, p)
	}
	if n := strings.Count(logs.String(), "not this Generator's"); n != 1 {
		t.Errorf("%d warnings about the foreign counter, want 1:\n%s", n, logs.String())
	}
}

// TestPlainPathShared: callers that arrive while a plain HINCRBY is in flight
// wait for it and then send one HINCRBY by their number together, each taking
// one of its slots; with many goroutines every ID is still issued once and each
// goroutine's IDs increase.
func TestPlainPathShared(t *testing.T) {
	r := newRig(t, layout.NodeValues{4, 5})
	h, l, ctx, g := r.h, r.l, r.ctx, r.g
	id0, err := g.Next(ctx) // the script call
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	ids := make(chan flurry.ID, n+1)
	errs := make(chan error, n)
	var once sync.Once
	h.mu.Lock()
	h.afterIncr = func(int64) {
		// The first plain call is answered, not yet taken: n callers
		// arrive meanwhile and wait to send together.
		once.Do(func() {
			for range n {
				go func() {
					id, err := g.Next(ctx)
					if err != nil {
						errs <- err
						return
					}
					ids <- id
				}()
			}
			is := g.cur.Load()
			for deadline := time.Now().Add(10 * time.Second); ; {
				is.bmu.Lock()
				waiting := is.open != nil && is.open.n == n
				is.bmu.Unlock()
				if waiting {
					return
				}
				if time.Now().After(deadline) {
					t.Error("the callers did not queue behind the plain call in flight")
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	h.mu.Unlock()
	id1, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids <- id1
	seqs := map[int64]bool{}
	p0, _ := l.Decompose(id0)
	for range n + 1 {
		var id flurry.ID
		select {
		case id = <-ids:
		case err := <-errs:
			t.Fatal(err)
		}
		p, err := l.Decompose(id)
		if err != nil || p.Tick != p0.Tick || p.Nodes != (layout.NodeValues{4, 5}) {
			t.Fatalf("ID %d decodes to %+v, %v; want tick %d", id, p, err, p0.Tick)
		}
		seqs[p.Sequence] = true
	}
	for s := p0.Sequence + 1; s <= p0.Sequence+n+1; s++ {
		if !seqs[s] {
			t.Fatalf("the %d plain IDs after sequence %d have sequences %v; want the next %d", n+1, p0.Sequence, seqs, n+1)
		}
	}
	if s, p := h.counts(); s != 1 || p != 2 {
		t.Fatalf("%d script calls and %d HINCRBYs for one scripted and %d plain IDs; want 1 and 2", s, p, n+1)
	}

	// Many goroutines, the system clock: each ID once, each goroutine's
	// increasing; with 4 sequence values a tick, shares are full (4 callers)
	// and the callers behind them wait for the next.
	manyGoroutines(t, l, 300)
	manyGoroutines(t, mustLayout(t, "time:41:1ms:2024-01-01T00:00:00Z,datacenter:5,worker:5,seq:2"), 50)
}

func manyGoroutines(t *testing.T, l *layout.Layout, perG int) {
	t.Helper()
	c, ctx := newClient(t), testCtx(t)
	ns := freshNamespace(t, c)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
	if err := g.SetNode(ctx, layout.NodeValues{6, 7}); err != nil {
		t.Fatal(err)
	}
	const goroutines = 32
	out := make([][]flurry.ID, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			for range perG {
				id, err := g.Next(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				out[w] = append(out[w], id)
			}
		})
	}
	wg.Wait()
	seen := make(map[flurry.ID]int, goroutines*perG)
	for w, ids := range out {
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("layout %s, goroutine %d: ID %d after %d", l, w, id, ids[i-1])
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("layout %s: ID %d issued to goroutines %d and %d", l, id, other, w)
			}
			seen[id] = w
		}
	}
}
