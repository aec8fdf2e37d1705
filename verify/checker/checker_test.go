package checker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/layout"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func twitter(t testing.TB) *layout.Layout {
	t.Helper()
	l, err := layout.Lookup("twitter")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// sfGen imitates one snowflake node: IDs from the op's time, its worker value and a
// sequence per tick.
type sfGen struct {
	l        *layout.Layout
	worker   int64
	tick     int64
	seq      int64
	behindMs int // clock skew: the node's clock runs this far behind
}

func (g *sfGen) next(t testing.TB, now time.Time, n int) []int64 {
	t.Helper()
	tick := g.l.TickOf(now.Add(-time.Duration(g.behindMs) * time.Millisecond))
	if tick > g.tick {
		g.tick, g.seq = tick, 0
	}
	ids := make([]int64, n)
	for i := range ids {
		if g.seq > g.l.MaxSequence() {
			g.tick, g.seq = g.tick+1, 0
		}
		id, err := g.l.Compose(layout.Parts{Tick: g.tick, Nodes: layout.NodeValues{1, g.worker}, Sequence: g.seq})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = int64(id)
		g.seq++
	}
	return ids
}

func seq(from int64, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = from + int64(i)
	}
	return ids
}

// cleanRun feeds a healthy run: three nodes, two clients, a snowflake and a segment
// namespace, 100 ms apart ops for 10 s, a restart of n2 at 5 s (snowflake continues
// above, segment takes a new range), and a 1 s outage of every node at 7 s.
func cleanRun(t testing.TB, c *Checker, l *layout.Layout) (ids int64) {
	t.Helper()
	gens := map[string]*sfGen{}
	segNext := map[string]int64{}
	var segTop int64 = 1
	nodes := []string{"n1", "n2", "n3"}
	for i, n := range nodes {
		gens[n] = &sfGen{l: l, worker: int64(i)}
		segNext[n] = segTop
		segTop += 1_000_000
	}
	c.Restarted(Restart{Node: "n2", At: at(5000)})
	for ms := 0; ms < 10_000; ms += 100 {
		for ci, client := range []string{"c1", "c2"} {
			node := nodes[(ms/100+ci)%3]
			start, end := at(ms+ci*10), at(ms+ci*10+5)
			if ms >= 7000 && ms < 8000 {
				c.Add(Op{Client: client, Node: node, Namespace: "sf", Start: start, End: end.Add(time.Second), Err: "timeout"})
				c.Add(Op{Client: client, Node: node, Namespace: "seg", Start: start, End: end, Err: "503"})
				continue
			}
			if node == "n2" && ms == 5000 {
				segNext["n2"] = segTop // the restarted process takes a fresh range
				segTop += 1_000_000
			}
			c.Add(Op{Client: client, Node: node, Namespace: "sf", Start: start, End: end, IDs: gens[node].next(t, end, 10)})
			c.Add(Op{Client: client, Node: node, Namespace: "seg", Start: start, End: end, IDs: seq(segNext[node], 10)})
			segNext[node] += 10
			ids += 20
		}
	}
	return ids
}

func newClean(t testing.TB) (*Checker, *layout.Layout) {
	l := twitter(t)
	return New([]Namespace{{Name: "sf", Kind: Snowflake, Layout: l, MaxAhead: time.Minute}, {Name: "seg", Kind: Segment}}), l
}

func TestCleanRunIsOK(t *testing.T) {
	c, l := newClean(t)
	want := cleanRun(t, c, l)
	r := c.Check([]Window{{Name: "outage", Start: at(7000), End: at(8000)}, {Name: "calm", Start: at(1000), End: at(3000)}})
	if !r.OK() {
		var b bytes.Buffer
		WriteMarkdown(&b, r)
		t.Fatalf("clean run not OK:\n%s", b.String())
	}
	if r.Totals.IDs != want || r.Totals.Requests != 400 || r.Totals.Answered != 360 {
		t.Errorf("totals %+v, want %d IDs, 400 requests, 360 answered", r.Totals, want)
	}
	sf := r.Namespaces[0]
	if sf.Errors["timeout"] != 20 || r.Namespaces[1].Errors["503"] != 20 {
		t.Errorf("errors %v / %v, want 20 timeouts and 20 503s", sf.Errors, r.Namespaces[1].Errors)
	}
	// The outage: last delivery at 6.9 s + 15 ms, next at 8 s + 5 ms.
	if g := sf.Gap; !g.From.Equal(at(6915)) || !g.To.Equal(at(8005)) {
		t.Errorf("gap %v..%v, want 6915ms..8005ms", g.From.Sub(t0), g.To.Sub(t0))
	}
	out := r.Windows[0]
	if out.Requests != 40 || out.Answered != 0 || out.IDs != 0 {
		t.Errorf("outage window %+v, want 40 requests, none answered, no IDs", out.Counts)
	}
	if g := out.Namespaces[0].Gap; g.Duration() != time.Second {
		t.Errorf("outage window gap %v, want the whole 1s window", g.Duration())
	}
	calm := r.Windows[1]
	if calm.Requests != 80 || calm.Answered != 80 || calm.IDs != 800 || calm.IDsPerSecond != 400 {
		t.Errorf("calm window %+v %v IDs/s, want 80 requests, all answered, 800 IDs, 400 IDs/s", calm.Counts, calm.IDsPerSecond)
	}
	if g := calm.Namespaces[1].Gap; g.Duration() != 90*time.Millisecond {
		t.Errorf("calm window gap %v, want 90ms (from 1005..1095)", g.Duration())
	}
	var n2 NodeResult
	for _, n := range sf.Nodes {
		if n.Node == "n2" {
			n2 = n
		}
	}
	if n2.Lifetimes != 2 || !slices.Equal(n2.NodeValues, []string{"datacenter=1,worker=1"}) {
		t.Errorf("n2 = %+v, want 2 lifetimes and node value datacenter=1,worker=1", n2)
	}
	if sf.OrderScope != "per node, across restarts" || r.Namespaces[1].OrderScope != "per node process lifetime" {
		t.Errorf("order scopes %q, %q", sf.OrderScope, r.Namespaces[1].OrderScope)
	}
	if s := r.Summary(); s != "OK: 3600 IDs in 400 requests (90.00% answered), 0 duplicates, 0 order violations, 0 out of range" {
		t.Errorf("summary %q", s)
	}
	if again := c.Check([]Window{{Name: "outage", Start: at(7000), End: at(8000)}, {Name: "calm", Start: at(1000), End: at(3000)}}); !reflect.DeepEqual(again, r) {
		t.Error("a second Check gives another result")
	}
}

func TestPlantedDuplicate(t *testing.T) {
	c, l := newClean(t)
	cleanRun(t, c, l)
	// n3 hands out an ID n1 handed out 2 s earlier (a reused node value), and a
	// segment ID comes back twice from two nodes.
	c.Add(Op{Client: "c1", Node: "n3", Namespace: "sf", Start: at(9990), End: at(9995), IDs: []int64{sfIDAt(t, c, "sf", 20)}})
	c.Add(Op{Client: "c2", Node: "n1", Namespace: "seg", Start: at(9990), End: at(9996), IDs: []int64{1_000_005}})
	r := c.Check([]Window{{Name: "end", Start: at(9900), End: at(10_000)}, {Name: "start", Start: at(0), End: at(1000)}})
	// The replayed snowflake ID is also below n3's earlier IDs: one order violation.
	if r.OK() || r.Totals.Duplicates != 2 || r.Namespaces[0].OrderViolations != 1 || r.Namespaces[1].OrderViolations != 0 {
		t.Fatalf("totals %+v, want 2 duplicates and 1 order violation in sf", r.Totals)
	}
	for _, ns := range r.Namespaces {
		if ns.Duplicates != 1 || len(ns.DuplicateExamples) != 1 {
			t.Fatalf("%s: %d duplicates, examples %+v; want 1", ns.Name, ns.Duplicates, ns.DuplicateExamples)
		}
		d := ns.DuplicateExamples[0]
		if d.Count != 2 || len(d.Ops) != 2 || !slices.Contains(d.Ops[0].IDs, d.ID) || !slices.Contains(d.Ops[1].IDs, d.ID) {
			t.Errorf("%s: example %+v, want the ID and both ops", ns.Name, d)
		}
		if !d.Ops[1].End.After(d.Ops[0].End) {
			t.Errorf("%s: example ops not in receipt order", ns.Name)
		}
	}
	if w := r.Windows[0]; w.Duplicates != 2 {
		t.Errorf("window end: %d duplicates, want 2 (the later receipts)", w.Duplicates)
	}
	if w := r.Windows[1]; w.Duplicates != 0 {
		t.Errorf("window start: %d duplicates, want 0 (the first receipts do not count)", w.Duplicates)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**FAILED**: 2 duplicates", fmt.Sprintf("duplicate: ID %d received 2 times", 1_000_005)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// sfIDAt returns the i-th ID received in a namespace, in Add order.
func sfIDAt(t *testing.T, c *Checker, ns string, i int) int64 {
	t.Helper()
	d := c.nss[c.byName[ns]]
	return d.ids.chunks[0][i]
}

func TestOrderAcrossRestart(t *testing.T) {
	l := twitter(t)
	c := New([]Namespace{{Name: "sf", Kind: Snowflake, Layout: l}, {Name: "rd", Kind: Redis, Layout: l}, {Name: "seg", Kind: Segment}})
	// Before the restart n1 is on time; it restarts at 2 s with its clock 30 s
	// behind and a fresh node value: unique IDs, all below the first run's.
	before := &sfGen{l: l, worker: 1}
	after := &sfGen{l: l, worker: 2, behindMs: 30_000}
	for ms := 0; ms < 4000; ms += 100 {
		g := before
		if ms >= 2000 {
			g = after
		}
		for _, ns := range []string{"sf", "rd"} {
			c.Add(Op{Client: "c1", Node: "n1", Namespace: ns, Start: at(ms), End: at(ms + 5), IDs: g.next(t, at(ms+5), 3)})
		}
		// Segment: the restarted process starts a fresh, lower range: allowed.
		from := int64(1000 + ms)
		if ms >= 2000 {
			from = int64(ms - 1000)
		}
		c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(ms), End: at(ms + 5), IDs: seq(from, 3)})
	}
	c.Restarted(Restart{Node: "n1", At: at(1990)})
	r := c.Check(nil)
	for _, ns := range r.Namespaces[:2] {
		// Every op after the restart starts below the first run's highest ID.
		if ns.OrderViolations != 20 {
			t.Errorf("%s: %d order violations, want 20", ns.Name, ns.OrderViolations)
		}
		if len(ns.OrderExamples) != MaxExamples {
			t.Fatalf("%s: %d examples, want %d", ns.Name, len(ns.OrderExamples), MaxExamples)
		}
		v := ns.OrderExamples[0]
		if v.Within || !v.AcrossRestart || v.Node != "n1" || v.Prev < v.Next || !v.Earlier.End.Before(v.Later.Start) {
			t.Errorf("%s: example %+v, want an across-restart pair, earlier answered before later sent", ns.Name, v)
		}
		if !slices.Contains(v.Earlier.IDs, v.Prev) || !slices.Contains(v.Later.IDs, v.Next) {
			t.Errorf("%s: example IDs not from its ops", ns.Name)
		}
	}
	if seg := r.Namespaces[2]; seg.OrderViolations != 0 || seg.Unordered != 0 {
		t.Errorf("segment: %d order violations, %d unordered; want 0: a new lifetime may start lower", seg.OrderViolations, seg.Unordered)
	}
	var b bytes.Buffer
	WriteMarkdown(&b, r)
	if !strings.Contains(b.String(), "across a restart of the node") {
		t.Errorf("report does not say the violation spans a restart:\n%s", b.String())
	}
}

func TestSegmentOrderInsideLifetime(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Restarted(Restart{Node: "n1", At: at(1000)})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(0), End: at(10), IDs: []int64{100, 101}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(20), End: at(30), IDs: []int64{50}})   // violation, same lifetime
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(990), End: at(1010), IDs: []int64{1}}) // spans the restart
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(1100), End: at(1110), IDs: []int64{10}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(1200), End: at(1210), IDs: []int64{9}}) // violation
	c.Add(Op{Client: "c1", Node: "n2", Namespace: "seg", Start: at(1300), End: at(1310), IDs: []int64{2}}) // other node: fine
	r := c.Check(nil)
	ns := r.Namespaces[0]
	if ns.OrderViolations != 2 || ns.Unordered != 1 {
		t.Fatalf("%d order violations, %d unordered; want 2 and 1", ns.OrderViolations, ns.Unordered)
	}
	for _, v := range ns.OrderExamples {
		if v.AcrossRestart {
			t.Errorf("example %+v marked across a restart", v)
		}
	}
}

func TestOrderInsideOp(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(0), End: at(10), IDs: []int64{1, 2, 2, 3, 1}})
	r := c.Check([]Window{{Name: "w", Start: at(0), End: at(11)}})
	ns := r.Namespaces[0]
	if ns.OrderViolations != 2 || ns.Duplicates != 2 || r.Windows[0].OrderViolations != 2 {
		t.Fatalf("%+v; want 2 order violations (2,2 and 3,1) and 2 duplicates", ns.Counts)
	}
	if v := ns.OrderExamples[1]; !v.Within || v.Prev != 3 || v.Next != 1 {
		t.Errorf("example %+v, want 3 then 1 within one op", v)
	}
}

func TestOverlappingOpsAreNotOrdered(t *testing.T) {
	// Concurrent requests to one node may be answered in any order; only ops that
	// did not overlap in time are compared. Touching ends do not order them either.
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(0), End: at(10), IDs: []int64{5}})
	c.Add(Op{Client: "c2", Node: "n1", Namespace: "seg", Start: at(5), End: at(15), IDs: []int64{4}})
	c.Add(Op{Client: "c3", Node: "n1", Namespace: "seg", Start: at(10), End: at(20), IDs: []int64{3}})
	if r := c.Check(nil); !r.OK() {
		t.Fatalf("overlapping ops reported: %+v", r.Totals)
	}
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(21), End: at(22), IDs: []int64{5}})
	r := c.Check(nil)
	if ns := r.Namespaces[0]; ns.OrderViolations != 1 || ns.Duplicates != 1 {
		t.Fatalf("%+v, want 1 order violation (5 after 5) and 1 duplicate", ns.Counts)
	}
}

func TestOutOfRange(t *testing.T) {
	l := twitter(t)
	js, err := layout.Lookup("jssafe")
	if err != nil {
		t.Fatal(err)
	}
	c := New([]Namespace{
		{Name: "sf", Kind: Snowflake, Layout: l, MaxAhead: time.Minute},
		{Name: "js", Kind: Redis, Layout: js},
		{Name: "seg", Kind: Segment},
	})
	now := time.Now()
	good := (&sfGen{l: l, worker: 3}).next(t, now, 1)[0]
	ahead := (&sfGen{l: l, worker: 3, behindMs: -3_600_000}).next(t, now, 1)[0]
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "sf", Start: now, End: now, IDs: []int64{-good, 0, good, ahead}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "js", Start: now, End: now, IDs: []int64{1 << 53, 1<<53 - 1}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: now, End: now, IDs: []int64{-1, 0, 1}})
	r := c.Check(nil)
	wantN := []int64{3, 1, 2}
	wantReason := [][]string{{"not positive", "not positive", "after it was received"}, {"above the layout's 53 bits"}, {"not positive", "not positive"}}
	for i, ns := range r.Namespaces {
		if ns.OutOfRange != wantN[i] || len(ns.OutOfRangeExamples) != int(wantN[i]) {
			t.Errorf("%s: %d out of range, want %d", ns.Name, ns.OutOfRange, wantN[i])
			continue
		}
		for j, ex := range ns.OutOfRangeExamples {
			if !strings.Contains(ex.Reason, wantReason[i][j]) {
				t.Errorf("%s: reason %q, want %q", ns.Name, ex.Reason, wantReason[i][j])
			}
		}
	}
	if r.OK() {
		t.Error("OK with IDs out of range")
	}
	if s := r.Summary(); !strings.HasPrefix(s, "FAILED: ") || !strings.Contains(s, "6 out of range") || !strings.Contains(s, "js: ID 9007199254740992 bits set above") {
		t.Errorf("summary %q", s)
	}
}

func TestUnknownNamespace(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "typo", Start: at(0), End: at(1), IDs: []int64{1}})
	r := c.Check(nil)
	if r.OK() || r.Unknown["typo"] != 1 {
		t.Fatalf("unknown namespace: OK=%v unknown=%v", r.OK(), r.Unknown)
	}
}

func TestEmpty(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	r := c.Check([]Window{{Name: "w", Start: at(0), End: at(1000)}})
	if !r.OK() || r.Totals.Requests != 0 || r.Windows[0].Namespaces[0].Gap.Duration() != time.Second {
		t.Fatalf("empty run: %+v", r)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := c.Throughput(time.Second); len(s) != 1 {
		t.Fatalf("throughput of an empty run: %v", s)
	}
}

// TestOrderSweepMatchesPairs compares the sweep with the definition, checked over
// all pairs, on random overlapping ops with random IDs, with and without restarts.
func TestOrderSweepMatchesPairs(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		kind := []Kind{Snowflake, Segment, Redis}[seed%3]
		c := New([]Namespace{{Name: "x", Kind: kind}})
		var restarts []int64
		for range rng.IntN(3) {
			at := rng.Int64N(1000)
			restarts = append(restarts, at)
			c.Restarted(Restart{Node: "n1", At: t0.Add(time.Duration(at))})
		}
		slices.Sort(restarts)
		type op struct{ s, e, lo, hi int64 }
		var ops []op
		for range 1 + rng.IntN(40) {
			s := rng.Int64N(1000)
			e := s + rng.Int64N(100)
			lo := 1 + rng.Int64N(100)
			hi := lo + rng.Int64N(5)
			ids := []int64{lo}
			if hi > lo {
				ids = append(ids, hi)
			}
			ops = append(ops, op{s, e, lo, hi})
			c.Add(Op{Client: "c", Node: "n1", Namespace: "x", Start: t0.Add(time.Duration(s)), End: t0.Add(time.Duration(e)), IDs: ids})
		}
		life := func(t int64) int { return lifetime(restarts, t) }
		var want, unordered int64
		for _, b := range ops {
			if kind == Segment && life(b.s) != life(b.e) {
				unordered++
				continue
			}
			for _, a := range ops {
				if kind == Segment && (life(a.s) != life(a.e) || life(a.s) != life(b.s)) {
					continue
				}
				if a.e < b.s && a.hi >= b.lo {
					want++
					break
				}
			}
		}
		ns := c.Check(nil).Namespaces[0]
		if ns.OrderViolations != want || ns.Unordered != unordered {
			t.Fatalf("seed %d (%v): %d violations, %d unordered; all pairs say %d, %d", seed, kind, ns.OrderViolations, ns.Unordered, want, unordered)
		}
	}
}

// TestDuplicatesMatchMap compares the sort-and-scan count with a map on random IDs
// drawn from a small range, and checks that every duplicate lands in a window that
// covers the run.
func TestDuplicatesMatchMap(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		c := New([]Namespace{{Name: "x", Kind: Segment}})
		seen := map[int64]int{}
		var want int64
		for i := range 1 + rng.IntN(50) {
			ids := make([]int64, rng.IntN(20))
			for j := range ids {
				ids[j] = 1 + rng.Int64N(300)
				if seen[ids[j]] > 0 {
					want++
				}
				seen[ids[j]]++
			}
			c.Add(Op{Client: "c", Node: fmt.Sprint("n", i%3), Namespace: "x", Start: at(i), End: at(i + 1), IDs: ids})
		}
		r := c.Check([]Window{{Name: "all", Start: at(0), End: at(100)}})
		ns := r.Namespaces[0]
		var byNode int64
		for _, n := range ns.Nodes {
			byNode += n.Duplicates
		}
		if ns.Duplicates != want || r.Windows[0].Duplicates != want || byNode != want {
			t.Fatalf("seed %d: %d duplicates (window %d, nodes %d), map says %d", seed, ns.Duplicates, r.Windows[0].Duplicates, byNode, want)
		}
		for _, d := range ns.DuplicateExamples {
			if d.Count != seen[d.ID] {
				t.Fatalf("seed %d: ID %d counted %d times, map says %d", seed, d.ID, d.Count, seen[d.ID])
			}
		}
	}
}

func TestConcurrentAdd(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, 10)
			for i := range 500 {
				for j := range buf {
					buf[j] = int64(g*1_000_000 + i*10 + j + 1)
				}
				c.Add(Op{Client: fmt.Sprint("c", g), Node: fmt.Sprint("n", g), Namespace: "seg", Start: at(i), End: at(i), IDs: buf})
				if i%100 == 0 {
					c.Restarted(Restart{Node: "nx", At: at(i)})
				}
			}
		}()
	}
	wg.Wait()
	r := c.Check(nil)
	if !r.OK() || r.Totals.IDs != 8*500*10 || len(r.Restarts) != 40 {
		t.Fatalf("concurrent adds: %+v, %d restarts", r.Totals, len(r.Restarts))
	}
}

func TestThroughput(t *testing.T) {
	c, l := newClean(t)
	total := cleanRun(t, c, l)
	series := c.Throughput(time.Second)
	if len(series) != 2 || series[0].Name != "sf" || series[1].Name != "seg" {
		t.Fatalf("series %v", series)
	}
	var sum float64
	for _, s := range series {
		if len(s.Points) != 10 { // 0..9.915 s in 1 s buckets
			t.Fatalf("%s: %d points, want 10", s.Name, len(s.Points))
		}
		for _, p := range s.Points {
			sum += p.Y // bucket is 1 s: Y is the bucket's count
		}
		if s.Points[7].Y != 0 || s.Points[2].Y != 200 || s.Points[0].X != 0.5 {
			t.Errorf("%s: points %v; want 0 IDs/s in the outage (bucket 7), 200 in bucket 2, X at bucket middles", s.Name, s.Points)
		}
	}
	if int64(sum) != total {
		t.Errorf("throughput sums to %v IDs, want %d", sum, total)
	}
	bands := c.Bands([]Window{{Name: "outage", Start: at(7000), End: at(8000)}})
	if len(bands) != 1 || bands[0].From != 7 || bands[0].To != 8 || bands[0].Label != "outage" {
		t.Errorf("bands %+v", bands)
	}
}

func TestMarkdownOK(t *testing.T) {
	c, l := newClean(t)
	cleanRun(t, c, l)
	r := c.Check([]Window{{Name: "outage", Start: at(7000), End: at(8000)}})
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"**OK**", "| sf | snowflake | 200 | 90.00% |", "| seg | segment |", "#### outage (T+7.000s to T+8.000s, 1s)",
		"| timeout | 20 |", "per node process lifetime", "datacenter=1,worker=2",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}
