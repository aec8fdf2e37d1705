package redisgen

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/layout"
)

// wideLayout has 57 time and sequence bits: too many for one exact Lua number, so
// its namespaces keep the hash format.
const wideLayout = "time:41:1ms:2020-01-01T00:00:00Z,worker:6,seq:16"

// oldClient runs the script of this package before the counter format, as a
// process that was not upgraded would.
type oldClient struct {
	c      redis.UniversalClient
	script *redis.Script
	keys   []string
}

func newOldClient(t testing.TB, c redis.UniversalClient, ns string, l *layout.Layout) *oldClient {
	t.Helper()
	p, err := paramsOf(l)
	if err != nil {
		t.Fatal(err)
	}
	return &oldClient{c: c, script: redis.NewScript(oldIssueScript(p)), keys: []string{nodeKey(ns), lastKey(ns)}}
}

// next issues one ID, or returns the status the old script answered with.
func (o *oldClient) next(ctx context.Context) (flurry.ID, int64, error) {
	v, err := o.script.Run(ctx, o.c, o.keys, 1).Result()
	if err != nil {
		return 0, 0, err
	}
	a := v.([]any)
	if a[0].(int64) != 0 {
		return 0, a[0].(int64), nil
	}
	return flurry.ID(a[1].(int64)<<32 | a[2].(int64)), 0, nil
}

// TestCounterFormat: a twitter namespace keeps its state as the next free slot in
// one field named after the layout, and the layout field carries the marker.
func TestCounterFormat(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
	if err := g.SetNode(ctx, layout.NodeValues{3, 4}); err != nil {
		t.Fatal(err)
	}
	var id flurry.ID
	for range 50 {
		var err error
		if id, err = g.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]flurry.ID, 100)
	n, err := g.NextN(ctx, buf)
	if err != nil {
		t.Fatal(err)
	}
	if buf[0] <= id {
		t.Fatalf("NextN's first ID %d is not above Next's last %d", buf[0], id)
	}
	id = buf[n-1]
	p := g.params
	h, err := c.HGetAll(ctx, lastKey(ns)).Result()
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := l.Decompose(id)
	f := p.counterField([]string{"3", "4"})
	want := map[string]string{"layout": p.marker(), "floor": "0", f: itoa(parts.Tick*p.slots() + parts.Sequence + 1)}
	if len(h) != len(want) || h["layout"] != want["layout"] || h[f] != want[f] || h["floor"] != want["floor"] {
		t.Fatalf("last key holds %v after ID %d (%+v); want %v", h, id, parts, want)
	}
}

// TestMigrateFromHashFormat: a namespace the previous script wrote moves to the
// counter format on the first call of a new client, which continues from the old
// state (here a last tick ahead of Redis's clock); from then on the old script
// refuses with a layout mismatch, so the two never issue from separate states.
func TestMigrateFromHashFormat(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	if err := c.HSet(ctx, nodeKey(ns), "datacenter", 2, "worker", 9).Err(); err != nil {
		t.Fatal(err)
	}
	old := newOldClient(t, c, ns, l)
	oldID, status, err := old.next(ctx)
	if err != nil || status != 0 {
		t.Fatalf("old script: %d, status %d, %v", oldID, status, err)
	}
	// The old state stands 3000 ticks (3 s) ahead, with most of its tick used.
	ahead := redisTick(t, c, l) + 3000
	if err := c.HSet(ctx, lastKey(ns), "tick", ahead, "seq", 4000).Err(); err != nil {
		t.Fatal(err)
	}
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: -1})
	_, err = g.Next(ctx)
	cb, ok := errors.AsType[*ClockBehindError](err)
	if !ok || cb.LastTick != ahead {
		t.Fatalf("first Next after the old state: %v; want a *ClockBehindError at the old last tick %d", err, ahead)
	}
	h, err := c.HGetAll(ctx, lastKey(ns)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h["tick"]; ok || h["layout"] != g.params.marker() || h[g.params.counterField([]string{"2", "9"})] != itoa(ahead*4096+4001) || h["floor"] != itoa(ahead*4096+4001) {
		t.Fatalf("after migration the last key holds %v", h)
	}
	if _, status, err := old.next(ctx); err != nil || status != statusLayout {
		t.Fatalf("old script after migration: status %d, %v; want the layout mismatch %d", status, err, statusLayout)
	}
	// A refused call with a clock behind keeps the migrated state; once the
	// clock passes it, IDs continue above it.
	g.behindWait = 10 * time.Second
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(id); p.Tick < ahead || (p.Tick == ahead && p.Sequence <= 4000) || p.Nodes != (layout.NodeValues{2, 9}) {
		t.Fatalf("ID %d (%+v) after the migrated state (tick %d, seq 4000)", id, p, ahead)
	}
}

// TestOldAndNewClients runs the old script and new generators on one namespace at
// once, for a counter layout (the first new call migrates: the old clients are
// refused from then on) and for a wide one (both keep the hash format and share
// it): in both cases no ID is issued twice.
func TestOldAndNewClients(t *testing.T) {
	for _, text := range []string{"twitter", wideLayout} {
		t.Run(text, func(t *testing.T) {
			c := newClient(t)
			l := mustLayout(t, text)
			ns := freshNamespace(t, c)
			ctx := testCtx(t)
			g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: time.Second})
			nv := layout.NodeValues{5}
			if len(l.NodeFields()) == 2 {
				nv = layout.NodeValues{5, 6}
			}
			if err := g.SetNode(ctx, nv); err != nil {
				t.Fatal(err)
			}
			old := newOldClient(t, c, ns, l)
			n, refused := mixOldAndNew(t, ctx, g, old.next, 400)
			// Whatever the interleaving was, the new client has issued: the old
			// script is refused from now on in the counter format, and shares the
			// state in the hash format.
			_, status, err := old.next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if g.params.counter() && status != statusLayout {
				t.Errorf("old script after the new client on a counter namespace: status %d; want the layout mismatch", status)
			}
			if !g.params.counter() && (status == statusLayout || refused > 0) {
				t.Errorf("old script on a hash-format namespace refused (status %d, %d refusals); old and new share that format", status, refused)
			}
			t.Logf("%d IDs, %d old calls refused", n, refused)
		})
	}
}

// mixOldAndNew runs an older client's next from two goroutines and g.Next from
// two, per calls each, at once on one namespace, and fails the test on an ID
// issued twice. It returns how many IDs were issued and how many of the older
// client's calls were refused with the layout mismatch.
func mixOldAndNew(t *testing.T, ctx context.Context, g *Generator, old func(context.Context) (flurry.ID, int64, error), per int) (issued, refused int) {
	t.Helper()
	var (
		mu   sync.Mutex
		ids  = map[flurry.ID]string{}
		wg   sync.WaitGroup
		errs = make(chan error, 4)
	)
	add := func(id flurry.ID, who string) error {
		mu.Lock()
		defer mu.Unlock()
		if other, dup := ids[id]; dup {
			return errors.New("ID " + itoa(int64(id)) + " issued to " + other + " and " + who)
		}
		ids[id] = who
		return nil
	}
	for w := range 4 {
		wg.Go(func() {
			for range per {
				if w%2 == 0 {
					id, status, err := old(ctx)
					if err != nil {
						errs <- err
						return
					}
					if status == statusLayout {
						mu.Lock()
						refused++
						mu.Unlock()
						continue
					}
					if status != 0 {
						continue // a full tick or a short clock step: the old script asks to wait
					}
					if err := add(id, "an old client"); err != nil {
						errs <- err
						return
					}
					continue
				}
				id, err := g.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				if err := add(id, "a new client"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return len(ids), refused
}

// TestFormatsRefuseEachOther: a generator of another layout, in either format, is
// refused on a namespace of either format, and leaves no counter of its own behind.
func TestFormatsRefuseEachOther(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	for _, tc := range []struct{ first, second string }{
		{"twitter", wideLayout},
		{wideLayout, "twitter"},
		{"twitter", "sonyflake"},
	} {
		ns := freshNamespace(t, c)
		a := newGen(t, Options{Client: c, Namespace: ns, Layout: mustLayout(t, tc.first)})
		b := newGen(t, Options{Client: c, Namespace: ns, Layout: mustLayout(t, tc.second)})
		// Both layouts' node fields, so that only the layout check can refuse.
		if err := c.HSet(ctx, nodeKey(ns), "datacenter", 1, "worker", 1, "machine", 1).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Next(ctx); err != nil {
			t.Fatalf("%s: %v", tc.first, err)
		}
		before, _ := c.HGetAll(ctx, lastKey(ns)).Result()
		_, err := b.Next(ctx)
		if !errors.Is(err, ErrLayoutMismatch) || !strings.Contains(err.Error(), a.l.String()) || strings.Contains(err.Error(), markerSuffix) || strings.Contains(err.Error(), markerSuffixV1) {
			t.Fatalf("%s on a %s namespace: %v; want ErrLayoutMismatch naming %s", tc.second, tc.first, err, a.l)
		}
		after, _ := c.HGetAll(ctx, lastKey(ns)).Result()
		if len(after) != len(before) {
			t.Fatalf("a refused %s call changed the last key from %v to %v", tc.second, before, after)
		}
		if _, err := a.Next(ctx); err != nil {
			t.Fatalf("%s after the refusal: %v", tc.first, err)
		}
	}
}

// TestNodeChanges: the script compares the node hash with the values the client
// read on every call, so a new value (SetNode, or written by hand) is in the first
// ID after the plain path's window (PlainWindow, measured on the Generator's
// clock, here a manual one), and a broken one stops the generator
// until it is fixed. Within the window Next may still issue with the old values,
// but only in the tick a script confirmed for them.
func TestNodeChanges(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	m := clock.NewManual(time.Now())
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, Clock: m})
	var confirmed int64 // the tick of the last ID before a change
	nodeOf := func() layout.NodeValues {
		t.Helper()
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := l.Decompose(id)
		confirmed = p.Tick
		return p.Nodes
	}
	if err := g.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}
	if got := nodeOf(); got != (layout.NodeValues{1, 1}) {
		t.Fatalf("node %v, want 1,1", got)
	}
	if err := g.SetNode(ctx, layout.NodeValues{7, 8}); err != nil {
		t.Fatal(err)
	}
	// Within the window: the old values, in the confirmed tick, or the new ones.
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(id); p.Nodes != (layout.NodeValues{7, 8}) && (p.Nodes != (layout.NodeValues{1, 1}) || p.Tick != confirmed) {
		t.Fatalf("ID %+v within the window after SetNode(7, 8): neither the new values nor the old ones in tick %d", p, confirmed)
	}
	m.Add(DefaultPlainWindow)
	if got := nodeOf(); got != (layout.NodeValues{7, 8}) {
		t.Fatalf("node %v after SetNode(7, 8) and one window", got)
	}
	c.HSet(ctx, nodeKey(ns), "worker", "012") // by hand, with a leading zero
	m.Add(DefaultPlainWindow)
	if got := nodeOf(); got != (layout.NodeValues{7, 12}) {
		t.Fatalf("node %v after worker was set to 012 by hand", got)
	}
	c.HSet(ctx, nodeKey(ns), "worker", "1e1")
	m.Add(DefaultPlainWindow)
	if _, err := g.Next(ctx); !errors.Is(err, ErrNodeInvalid) {
		t.Fatalf("Next with worker 1e1: %v; want ErrNodeInvalid", err)
	}
	c.HDel(ctx, nodeKey(ns), "worker")
	if _, err := g.Next(ctx); !errors.Is(err, ErrNodeUnset) {
		t.Fatalf("Next without worker: %v; want ErrNodeUnset", err)
	}
	c.HSet(ctx, nodeKey(ns), "worker", 30)
	if got := nodeOf(); got != (layout.NodeValues{7, 30}) {
		t.Fatalf("node %v after worker was set again", got)
	}
	// The node key replaced by a string while the generator runs.
	c.Del(ctx, nodeKey(ns))
	c.Set(ctx, nodeKey(ns), "7", 0)
	m.Add(DefaultPlainWindow)
	if _, err := g.Next(ctx); err == nil {
		t.Fatal("Next with a string node key succeeded")
	}
	if _, err := g.Next(ctx); !errors.Is(err, ErrNodeInvalid) || !strings.Contains(err.Error(), "not a hash") {
		t.Fatalf("Next with a string node key, again: %v; want ErrNodeInvalid saying it is not a hash", err)
	}
}
