package redisgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newClient connects to the test Redis; the test is skipped (or fails, with
// FLURRY_TEST_REQUIRE=1) when it does not answer.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(testenv.Redis.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// freshNamespace returns a namespace no other test run uses, and deletes its keys
// when the test ends.
func freshNamespace(t testing.TB, c redis.UniversalClient) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	ns := "flurry-test-redisgen-" + hex.EncodeToString(b)
	t.Cleanup(func() { c.Del(context.Background(), nodeKey(ns), lastKey(ns)) })
	return ns
}

func mustLayout(t testing.TB, text string) *layout.Layout {
	t.Helper()
	l, err := layout.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newGen(t testing.TB, opts Options) *Generator {
	t.Helper()
	g, err := New(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// redisTick reads Redis TIME as a tick of l.
func redisTick(t testing.TB, c redis.UniversalClient, l *layout.Layout) int64 {
	t.Helper()
	now, err := c.Time(testCtx(t)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return l.TickOf(now)
}

// recentEpoch is an epoch a minute ago, for layouts with short time fields.
func recentEpoch() string {
	return time.Now().Add(-time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339)
}

func TestIDsDecode(t *testing.T) {
	c := newClient(t)
	epoch := recentEpoch()
	for _, tc := range []struct {
		name   string
		layout string
		node   string
		rounds int // zero: 20
	}{
		{"twitter", "twitter", "datacenter=17,worker=9", 0},
		{"twitter max node", "twitter", "datacenter=31,worker=31", 0},
		{"sonyflake 10ms, seq above machine", "sonyflake", "machine=65535", 0},
		{"seq between node fields", "time:40:1ms:2020-01-01T00:00:00Z,region:4,seq:10,host:9", "region=9,host=300", 0},
		{"1s unit", "time:32:1s:2020-01-01T00:00:00Z,worker:16,seq:15", "worker=40000", 0},
		{"node field across bit 32", "time:20:1s:" + epoch + ",wide:30,seq:13", "wide=1073741823", 0},
		{"wide node field", "time:9:1s:" + epoch + ",wide:52,seq:2", "wide=4503599627370495", 3},
		{"gameserver", "gameserver", "platform=7,area=2047,app=31", 0},
		{"no node field", "mastodon", "", 0},
		{"hash format (57 time and sequence bits)", wideLayout, "worker=63", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustLayout(t, tc.layout)
			nv, err := l.ParseNodeValues(tc.node)
			if err != nil {
				t.Fatal(err)
			}
			g := newGen(t, Options{Client: c, Namespace: freshNamespace(t, c), Layout: l})
			ctx := testCtx(t)
			if len(l.NodeFields()) > 0 {
				if err := g.SetNode(ctx, nv); err != nil {
					t.Fatal(err)
				}
				if got, err := g.Node(ctx); err != nil || got != nv {
					t.Fatalf("Node() = %v, %v; want %v", got, err, nv)
				}
			}
			var prev flurry.ID
			buf := make([]flurry.ID, 300)
			if tc.rounds == 0 {
				tc.rounds = 20
			}
			for round := range tc.rounds {
				before := redisTick(t, c, l)
				var ids []flurry.ID
				if round%2 == 0 {
					id, err := g.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					ids = []flurry.ID{id}
				} else {
					n, err := g.NextN(ctx, buf)
					if err != nil {
						t.Fatal(err)
					}
					if n < 1 || int64(n) > l.MaxSequence()+1 {
						t.Fatalf("NextN gave %d IDs", n)
					}
					ids = buf[:n]
				}
				after := redisTick(t, c, l)
				for i, id := range ids {
					if id <= prev {
						t.Fatalf("ID %d after %d: not increasing", id, prev)
					}
					prev = id
					p, err := l.Decompose(id)
					if err != nil {
						t.Fatal(err)
					}
					if p.Nodes != nv {
						t.Fatalf("ID %d decodes to node %v, want %v", id, p.Nodes, nv)
					}
					// Next's plain path issues in a tick a script
					// confirmed less than PlainWindow before.
					lag := int64(0)
					if round%2 == 0 && g.window > 0 {
						lag = g.window/int64(l.Unit()) + 1
					}
					if p.Tick < before-lag || p.Tick > after {
						t.Fatalf("ID %d decodes to tick %d; Redis TIME read ticks %d before and %d after the call", id, p.Tick, before, after)
					}
					if i > 0 {
						q, _ := l.Decompose(ids[0])
						if p.Tick != q.Tick || p.Sequence != q.Sequence+int64(i) {
							t.Fatalf("batch ID %d is %+v; the batch started at %+v", i, p, q)
						}
					}
				}
			}
		})
	}
}

// TestOverflow drives a 2-bit sequence (4 IDs per millisecond) from 8 goroutines
// through 3 generators with their own clients on one namespace: the script must hand
// out each (tick, sequence) once and make the callers wait for the next tick,
// never wrap.
func TestOverflow(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "time:41:1ms:2024-01-01T00:00:00Z,worker:5,seq:2")
	ns := freshNamespace(t, c)
	var gens []*Generator
	for range 3 {
		gens = append(gens, newGen(t, Options{URL: testenv.Redis.URL(t), Namespace: ns, Layout: l}))
	}
	if err := gens[0].SetNode(testCtx(t), layout.NodeValues{21}); err != nil {
		t.Fatal(err)
	}
	const goroutines, perG = 8, 2000
	ctx := testCtx(t)
	results := make([][]flurry.ID, goroutines)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			g := gens[w%len(gens)]
			out := make([]flurry.ID, 0, perG)
			buf := make([]flurry.ID, 3)
			for len(out) < perG {
				if w%2 == 0 {
					id, err := g.Next(ctx)
					if err != nil {
						errs <- err
						return
					}
					out = append(out, id)
					continue
				}
				n, err := g.NextN(ctx, buf[:min(len(buf), perG-len(out))])
				if err != nil {
					errs <- err
					return
				}
				out = append(out, buf[:n]...)
			}
			results[w] = out
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[flurry.ID]int, goroutines*perG)
	perTick := map[int64]int{}
	for w, ids := range results {
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("goroutine %d: ID %d after %d", w, id, ids[i-1])
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %d issued to goroutines %d and %d", id, other, w)
			}
			seen[id] = w
			p, err := l.Decompose(id)
			if err != nil || p.Nodes[0] != 21 {
				t.Fatalf("ID %d decodes to %+v, %v", id, p, err)
			}
			perTick[p.Tick]++
		}
	}
	for tick, n := range perTick {
		if n > 4 {
			t.Fatalf("tick %d has %d IDs; a 2-bit sequence holds 4", tick, n)
		}
	}
	t.Logf("%d IDs in %d ticks", len(seen), len(perTick))
}

// rawNode reads the namespace's node values as Redis holds them, as the
// Generator does.
func rawNode(t testing.TB, c redis.UniversalClient, ns string, p scriptParams) []string {
	t.Helper()
	var raw []string
	for _, f := range p.nodes {
		v, err := c.HGet(testCtx(t), nodeKey(ns), f.name).Result()
		if err != nil {
			t.Fatalf("node field %s: %v", f.name, err)
		}
		raw = append(raw, v)
	}
	return raw
}

// setLast writes the namespace's last key as the script does, in the layout's
// format. Moving it ahead of Redis TIME is how these tests simulate Redis's clock
// stepping back (or a failover to a server whose clock is behind) without touching
// the server's clock.
func setLast(t testing.TB, c redis.UniversalClient, ns string, l *layout.Layout, tick, seq int64) {
	t.Helper()
	p, err := paramsOf(l)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if p.counter() {
		err = c.HSet(ctx, lastKey(ns), p.counterField(rawNode(t, c, ns, p)), tick*p.slots()+seq+1, "layout", p.marker()).Err()
	} else {
		err = c.HSet(ctx, lastKey(ns), "tick", tick, "seq", seq, "layout", l.String()).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestClockBehind(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	var logs syncBuffer
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := testCtx(t)
	if err := g.SetNode(ctx, layout.NodeValues{1, 2}); err != nil {
		t.Fatal(err)
	}
	first, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}

	ahead := redisTick(t, c, l) + 5000 // 5 s in the future
	setLast(t, c, ns, l, ahead, 7)
	_, err = g.Next(ctx)
	cb, ok := errors.AsType[*ClockBehindError](err)
	if !ok || !errors.Is(err, ErrClockBehind) {
		t.Fatalf("Next with the last tick 5 s ahead: %v; want a *ClockBehindError", err)
	}
	if cb.Gap <= 0 || cb.Gap > 5*time.Second || cb.LastTick != ahead || cb.Tick >= ahead || cb.Namespace != ns {
		t.Fatalf("ClockBehindError %+v; want a gap in (0, 5s] and last tick %d", cb, ahead)
	}
	if !strings.Contains(err.Error(), "behind") {
		t.Errorf("error %q does not say the clock is behind", err)
	}
	if _, err := g.NextN(ctx, make([]flurry.ID, 10)); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("NextN: %v, want ErrClockBehind", err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings for one clock-behind episode, want 1:\n%s", n, logs.String())
	}

	// The clock "catches up": the last tick is in the past again, but not before
	// first's tick (full at 4095), which this test's own rewind would otherwise
	// hand out again when the whole test runs within one tick.
	fp, _ := l.Decompose(first)
	past := max(redisTick(t, c, l)-10, fp.Tick)
	setLast(t, c, ns, l, past, 4095)
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatalf("Next after the clock caught up: %v", err)
	}
	if p, _ := l.Decompose(id); p.Tick <= past || id <= first {
		t.Fatalf("ID %d (%+v) after the clock caught up is not above tick %d and ID %d", id, p, past, first)
	}
}

// TestClockBehindWait: a gap within BehindWait is slept through.
func TestClockBehindWait(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: 10 * time.Second})
	ctx := testCtx(t)
	if err := g.SetNode(ctx, layout.NodeValues{1, 2}); err != nil {
		t.Fatal(err)
	}
	ahead := redisTick(t, c, l) + 30
	setLast(t, c, ns, l, ahead, 4095) // the tick is full too: the first ID is in ahead+1
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Decompose(id); p.Tick <= ahead {
		t.Fatalf("ID %d has tick %d; want one after the last tick %d", id, p.Tick, ahead)
	}

	// BehindWait < 0 fails at once, even for a small gap.
	g2 := newGen(t, Options{Client: c, Namespace: ns, Layout: l, BehindWait: -1})
	setLast(t, c, ns, l, redisTick(t, c, l)+1000, 0)
	if _, err := g2.Next(ctx); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("BehindWait -1: %v, want ErrClockBehind", err)
	}
}

func TestNodeErrors(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
	ctx := testCtx(t)

	_, err := g.Next(ctx)
	if !errors.Is(err, ErrNodeUnset) || !strings.Contains(err.Error(), "set-node") || !strings.Contains(err.Error(), nodeKey(ns)) {
		t.Fatalf("Next without a node key: %v; want ErrNodeUnset naming the key and the fix", err)
	}
	if _, err := g.Node(ctx); !errors.Is(err, ErrNodeUnset) {
		t.Fatalf("Node without a node key: %v", err)
	}
	if n, err := c.Exists(ctx, lastKey(ns)).Result(); err != nil || n != 0 {
		t.Fatalf("a refused call wrote the last key (%d, %v)", n, err)
	}

	c.HSet(ctx, nodeKey(ns), "datacenter", 1) // worker still missing
	if _, err := g.Next(ctx); !errors.Is(err, ErrNodeUnset) || !strings.Contains(err.Error(), `"worker"`) {
		t.Fatalf("Next with worker missing: %v", err)
	}

	for _, bad := range []string{"32", "-1", "x", "1.5", "99999999999999999999"} {
		c.HSet(ctx, nodeKey(ns), "worker", bad)
		if _, err := g.Next(ctx); !errors.Is(err, ErrNodeInvalid) {
			t.Errorf("Next with worker %q: %v; want ErrNodeInvalid", bad, err)
		}
		if _, err := g.Node(ctx); !errors.Is(err, ErrNodeInvalid) {
			t.Errorf("Node with worker %q: %v; want ErrNodeInvalid", bad, err)
		}
	}

	c.Del(ctx, nodeKey(ns))
	c.Set(ctx, nodeKey(ns), "7", 0) // the seed's form: a plain string
	if _, err := g.Next(ctx); !errors.Is(err, ErrNodeInvalid) || !strings.Contains(err.Error(), "not a hash") {
		t.Fatalf("Next with a string node key: %v", err)
	}
	c.Del(ctx, nodeKey(ns))

	for _, nv := range []layout.NodeValues{{32, 0}, {0, -1}, {0, 0, 5}} {
		if err := g.SetNode(ctx, nv); !errors.Is(err, ErrNodeInvalid) || !errors.Is(err, layout.ErrInvalid) {
			t.Errorf("SetNode(%v): %v; want ErrNodeInvalid", nv, err)
		}
	}
	if err := g.SetNode(ctx, layout.NodeValues{31, 31}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}

	m := newGen(t, Options{Client: c, Namespace: freshNamespace(t, c), Layout: mustLayout(t, "mastodon")})
	if err := m.SetNode(ctx, layout.NodeValues{}); !errors.Is(err, ErrNodeInvalid) {
		t.Errorf("SetNode on a layout without node fields: %v", err)
	}
}

func TestLayoutMismatch(t *testing.T) {
	c := newClient(t)
	ns := freshNamespace(t, c)
	ctx := testCtx(t)
	tw := newGen(t, Options{Client: c, Namespace: ns, Layout: mustLayout(t, "twitter")})
	if err := tw.SetNode(ctx, layout.NodeValues{1, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Next(ctx); err != nil {
		t.Fatal(err)
	}
	// The twitter preset written out is the same layout.
	same := newGen(t, Options{Client: c, Namespace: ns, Layout: mustLayout(t, mustLayout(t, "twitter").String())})
	if _, err := same.Next(ctx); err != nil {
		t.Fatalf("twitter's text form on a twitter namespace: %v", err)
	}
	// leaf has twitter's bits with other node fields (worker:10 against
	// datacenter:5,worker:5): the "worker" value would mean two things.
	for _, other := range []string{"leaf", "sonyflake", "time:41:1ms:2010-11-04T01:42:54.658Z,datacenter:5,worker:5,seq:12"} {
		g := newGen(t, Options{Client: c, Namespace: ns, Layout: mustLayout(t, other)})
		_, err := g.Next(ctx)
		if !errors.Is(err, ErrLayoutMismatch) && !errors.Is(err, ErrNodeUnset) {
			t.Fatalf("%s on a twitter namespace: %v; want ErrLayoutMismatch", other, err)
		}
		g.SetNode(ctx, layout.NodeValues{1})
		if _, err := g.Next(ctx); !errors.Is(err, ErrLayoutMismatch) {
			t.Fatalf("%s on a twitter namespace: %v; want ErrLayoutMismatch", other, err)
		}
		if _, err := tw.Next(ctx); err != nil && !errors.Is(err, ErrNodeInvalid) {
			t.Fatal(err)
		}
		tw.SetNode(ctx, layout.NodeValues{1, 1})
	}
}

// TestExhaustedAndBeforeEpoch changes the layout numbers the generator sends, as a
// layout that ran out (or whose epoch is ahead of Redis's clock) would.
func TestExhaustedAndBeforeEpoch(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ctx := testCtx(t)

	g := newGen(t, Options{Client: c, Namespace: freshNamespace(t, c), Layout: l})
	g.SetNode(ctx, layout.NodeValues{1, 1})
	g.params.maxTick = redisTick(t, c, l) - 1
	g.cur.Store(nil) // the next call makes its scripts from g.params
	if _, err := g.Next(ctx); !errors.Is(err, ErrExhausted) {
		t.Fatalf("Next past the last tick: %v; want ErrExhausted", err)
	}

	g2 := newGen(t, Options{Client: c, Namespace: freshNamespace(t, c), Layout: l})
	g2.SetNode(ctx, layout.NodeValues{1, 1})
	g2.params.epoch = time.Now().Add(time.Hour).UnixMilli()
	g2.cur.Store(nil)
	if _, err := g2.Next(ctx); !errors.Is(err, ErrBeforeEpoch) {
		t.Fatalf("Next before the epoch: %v; want ErrBeforeEpoch", err)
	}

	if _, err := New(ctx, Options{Client: c, Layout: mustLayout(t, "baidu")}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("New with the exhausted baidu layout: %v", err)
	}
}

func TestOptions(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no layout", Options{Client: c}, "Layout is nil"},
		{"no client", Options{Layout: l}, "neither Options.Client nor Options.URL"},
		{"both", Options{Client: c, URL: "redis://127.0.0.1:6379/0", Layout: l}, "both"},
		{"brace", Options{Client: c, Layout: l, Namespace: "a{b"}, "contains '{'"},
		{"plain window", Options{Client: c, Layout: l, PlainWindow: 500 * time.Millisecond}, "PlainWindow 500ms is longer than 10ms"},
		{"plain window of the unit", Options{Client: c, Layout: mustLayout(t, "jssafe"), PlainWindow: 101 * time.Millisecond}, "PlainWindow 101ms is longer than 100ms"},
		{"space", Options{Client: c, Layout: l, Namespace: "a b"}, "contains ' '"},
		{"long", Options{Client: c, Layout: l, Namespace: strings.Repeat("n", 201)}, "at most 200"},
		{"scheme", Options{URL: "http://127.0.0.1:6379", Layout: l}, "scheme must be redis"},
		{"url key", Options{URL: "redis://u:sekrit@127.0.0.1:6379/0?bogus=1", Layout: l}, "bogus"},
		{"unreachable", Options{URL: "redis://u:sekrit@127.0.0.1:" + fmt.Sprint(testenv.FreePort(t)) + "/0?dial_timeout=200ms&max_retries=-1", Layout: l}, "no answer within 200ms (is Redis running there?)"},
		{"wide node", Options{Client: c, Layout: mustLayout(t, "time:9:1s:"+recentEpoch()+",wide:53,seq:1")}, "at most 52"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(ctx, tc.opts)
			if err == nil {
				g.Close()
				t.Fatalf("New succeeded; want an error with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sekrit") {
				t.Fatalf("error %q; want one with %q and without the password", err, tc.want)
			}
		})
	}

	g := newGen(t, Options{Client: c, Layout: l})
	if g.Namespace() != DefaultNamespace || g.behindWait != DefaultBehindWait || g.Layout() != l {
		t.Errorf("defaults: namespace %q, BehindWait %v", g.Namespace(), g.behindWait)
	}
	if n, err := g.NextN(ctx, nil); n != 0 || err != nil {
		t.Errorf("NextN(nil) = %d, %v", n, err)
	}
	g.Close()
	if _, err := g.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("Close closed the caller's client: %v", err)
	}
}

func TestContextCancelledWhileWaiting(t *testing.T) {
	c := newClient(t)
	l := mustLayout(t, "time:32:1s:2020-01-01T00:00:00Z,worker:4,seq:1")
	ns := freshNamespace(t, c)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
	if err := g.SetNode(testCtx(t), layout.NodeValues{3}); err != nil {
		t.Fatal(err)
	}
	setLast(t, c, ns, l, redisTick(t, c, l)+3600, 1) // an hour ahead, tick full
	ctx, cancel := context.WithCancel(testCtx(t))
	g.behindWait = 2 * time.Hour
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := g.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes, for log output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLuaQuote: every byte string comes back from Redis's Lua as it went in, so a
// node field name or layout text baked into the script cannot change the script.
func TestLuaQuote(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range []string{"", "worker", `a"b\c'd`, "]]--", "\n\r\x00", string(all)} {
		got, err := c.Eval(ctx, "return "+luaQuote(s), nil).Text()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got != s {
			t.Errorf("luaQuote(%q) came back as %q", s, got)
		}
	}
}
