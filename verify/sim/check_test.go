package sim

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/segment"
)

// The tests in this file feed the lease checker hand-made histories: what the store
// applied (acquisitions, renewals, releases, in the order a LeaseStore reports them)
// and the IDs generators returned, each decided at a given moment. Each planted
// anomaly must be reported, under its kind and no other, and a clean history must
// pass. The simulation's runs show that the real protocol yields no violation; these
// show that a violation would not go unseen.

// history drives a lease checker by hand, on a world with no nodes and no scheduler:
// the simulated time is set by the test.
type history struct {
	t     *testing.T
	w     *LeaseWorld
	nodes map[int]*leaseNode
}

const histTTL = 5 * time.Second

func newHistory(t *testing.T) *history {
	lay, err := layout.Parse(simLayout)
	if err != nil {
		t.Fatal(err)
	}
	s := New(1, simStart)
	w := &LeaseWorld{sim: s, lay: lay}
	w.sclk = &storeClock{sim: s, start: s.now}
	w.store = memstore.New(w.sclk)
	w.chk.init(w)
	return &history{t: t, w: w, nodes: map[int]*leaseNode{}}
}

// at sets the simulated time to d after the start.
func (h *history) at(d time.Duration) { h.w.sim.now = simStart + int64(d) }

// ms returns the instant d after the start in Unix milliseconds: a mark.
func ms(d time.Duration) int64 { return time.Unix(0, simStart+int64(d)).UnixMilli() }

// node returns process 1 of simulated node i, in pool 0.
func (h *history) node(i int) *leaseNode {
	if n := h.nodes[i]; n != nil {
		return n
	}
	n := &leaseNode{Node: &Node{ID: i, sim: h.w.sim}, w: h.w, group: 0, inc: 1,
		owner: fmt.Sprintf("n%d.1", i), scope: "sim/dc=0"}
	h.nodes[i] = n
	return n
}

// acquire has the store give value to n's process now, as the store wrapper reports
// it to the checker.
func (h *history) acquire(n *leaseNode, value int64) lease.Lease {
	h.t.Helper()
	l, err := h.w.store.AcquireValue(context.Background(), n.scope, value, n.owner, histTTL)
	if err != nil {
		h.t.Fatalf("acquire %d for %s: %v", value, n.owner, err)
	}
	h.w.acquired(l)
	return l
}

// reserve renews l now with mark (Unix ms).
func (h *history) reserve(l lease.Lease, mark int64) lease.Lease {
	h.t.Helper()
	l2, err := h.w.store.Renew(context.Background(), l, histTTL, mark)
	if err != nil {
		h.t.Fatalf("renew: %v", err)
	}
	h.w.renewed(l2, "")
	return l2
}

// release ends l now with mark (Unix ms).
func (h *history) release(l lease.Lease, mark int64) {
	h.t.Helper()
	if err := h.w.store.Release(context.Background(), l, mark); err != nil {
		h.t.Fatalf("release: %v", err)
	}
	h.w.released(l)
}

// id is the ID of value in pool 0, in the tick at d after the start.
func (h *history) id(d time.Duration, value, seq int64) flurry.ID {
	return h.idIn(0, d, value, seq)
}

func (h *history) idIn(pool int64, d time.Duration, value, seq int64) flurry.ID {
	h.t.Helper()
	lay := h.w.lay
	id, err := lay.Compose(layout.Parts{Tick: lay.TickOf(time.Unix(0, simStart+int64(d))), Nodes: layout.NodeValues{pool, value}, Sequence: seq})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// issue has n's generator return ids, decided (its clock read) now.
func (h *history) issue(n *leaseNode, ids ...flurry.ID) {
	h.issueDecided(n, h.w.sim.now, ids...)
}

// issueDecided has n's generator return ids now, decided at true time decided: a
// process paused between its clock read and its ID.
func (h *history) issueDecided(n *leaseNode, decided int64, ids ...flurry.ID) {
	for _, id := range ids {
		n.lastRead = decided
		h.w.chk.issued(n, id)
	}
}

// expect fails unless the checker reported exactly want (kind: count).
func (h *history) expect(want map[string]int64) {
	h.t.Helper()
	got := h.w.chk.byKind
	if !maps.Equal(got, want) {
		h.t.Errorf("violations %v; want %v", got, want)
		for _, v := range h.w.chk.first {
			h.t.Log(v)
		}
	}
	for _, v := range h.w.chk.first {
		if _, ok := want[v.Kind]; !ok || v.Detail == "" {
			h.t.Errorf("violation %v: unexpected kind, or no detail", v)
		}
	}
}

// handOver is the common start of the cross-holder cases: node 0 holds value 3,
// reserves 2 s, issues in the ticks at 10 ms and 20 ms, and releases at 100 ms with
// releaseMark; node 1 then acquires value 3 at 200 ms and reserves 2 s. It returns
// node 1 and node 0's IDs.
func (h *history) handOver(releaseMark int64) (*leaseNode, []flurry.ID) {
	a, b := h.node(0), h.node(1)
	h.at(0)
	la := h.reserve(h.acquire(a, 3), ms(2*time.Second))
	ids := []flurry.ID{h.id(10*time.Millisecond, 3, 0), h.id(10*time.Millisecond, 3, 1), h.id(20*time.Millisecond, 3, 0)}
	h.at(10 * time.Millisecond)
	h.issue(a, ids[:2]...)
	h.at(20 * time.Millisecond)
	h.issue(a, ids[2])
	h.at(100 * time.Millisecond)
	h.release(la, releaseMark)
	h.at(200 * time.Millisecond)
	h.reserve(h.acquire(b, 3), ms(2200*time.Millisecond))
	return b, ids
}

func TestCheckerCleanHistory(t *testing.T) {
	h := newHistory(t)
	// Value 3 passes from node 0 to node 1 by a release with the last tick node 0
	// issued in, and node 1 issues in later ticks.
	b, _ := h.handOver(ms(20 * time.Millisecond))
	h.issue(b, h.id(200*time.Millisecond, 3, 0), h.id(200*time.Millisecond, 3, 1), h.id(201*time.Millisecond, 3, 0))
	// Node 2 holds value 4 meanwhile, renews as the clock goes, issues up to its
	// reservation, and crashes; node 3 takes value 4 after the lease expired, above
	// the reservation node 2 left.
	c, d := h.node(2), h.node(3)
	h.at(300 * time.Millisecond)
	lc := h.reserve(h.acquire(c, 4), ms(2300*time.Millisecond))
	h.issue(c, h.id(300*time.Millisecond, 4, 0))
	h.at(2 * time.Second)
	h.reserve(lc, ms(4*time.Second))
	h.issue(c, h.id(2*time.Second, 4, 0), h.id(4*time.Second, 4, 0)) // the last tick of its reservation
	h.at(2*time.Second + histTTL + time.Millisecond)                 // node 2's lease has expired
	ld := h.acquire(d, 4)
	if ld.Mark != ms(4*time.Second) {
		t.Fatalf("node 3 found mark %d; want node 2's reservation %d", ld.Mark, ms(4*time.Second))
	}
	h.reserve(ld, ms(9*time.Second))
	h.issue(d, h.id(4*time.Second+time.Millisecond, 4, 0), h.id(7*time.Second, 4, 0))
	// A node may move to another value and go on above its last ID.
	h.at(8 * time.Second)
	h.reserve(h.acquire(b, 5), ms(10*time.Second))
	h.issue(b, h.id(8*time.Second, 5, 0))
	h.expect(map[string]int64{})
	if h.w.chk.holders != 5 {
		t.Errorf("%d holders counted; want 5", h.w.chk.holders)
	}
}

// Each planted anomaly is reported under its kind, and under no other.
func TestCheckerCatchesPlantedAnomalies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(h *history)
		want  map[string]int64
	}{
		{
			// A store that lowered the mark below what node 0 issued: node 1 starts
			// above that mark, and returns an ID node 0 returned.
			name: "duplicate across holders",
			plant: func(h *history) {
				b, ids := h.handOver(ms(5 * time.Millisecond))
				h.issue(b, ids[2])
			},
			want: map[string]int64{"duplicate": 1},
		},
		{
			// The same, with an ID node 0 did not return but below its last.
			name: "order across holders: below an earlier holder",
			plant: func(h *history) {
				b, _ := h.handOver(ms(5 * time.Millisecond))
				h.issue(b, h.id(15*time.Millisecond, 3, 0))
			},
			want: map[string]int64{"order-value": 1},
		},
		{
			// Node 0 read its clock before its lease expired, paused, and returned an
			// ID after node 1 took the value, at or above node 1's first.
			name: "order across holders: above a later holder",
			plant: func(h *history) {
				a, b := h.node(0), h.node(1)
				h.at(0)
				h.reserve(h.acquire(a, 3), ms(3*time.Second))
				h.issue(a, h.id(0, 3, 0))
				h.at(6 * time.Second) // node 0's lease has expired
				h.reserve(h.acquire(b, 3), ms(9*time.Second))
				h.issue(b, h.id(6*time.Second, 3, 0))
				h.issueDecided(a, simStart+int64(4900*time.Millisecond), h.id(6*time.Second, 3, 1))
			},
			want: map[string]int64{"order-value": 1},
		},
		{
			// One holder's IDs go back; the same generator's do too.
			name: "order within a holder",
			plant: func(h *history) {
				a := h.node(0)
				h.reserve(h.acquire(a, 3), ms(2*time.Second))
				h.issue(a, h.id(20*time.Millisecond, 3, 0), h.id(10*time.Millisecond, 3, 0))
			},
			want: map[string]int64{"order-holder": 1, "order-generator": 1},
		},
		{
			// A generator moves to another value and goes back below its last ID.
			name: "order within a generator across values",
			plant: func(h *history) {
				a := h.node(0)
				la := h.reserve(h.acquire(a, 3), ms(2*time.Second))
				h.at(20 * time.Millisecond)
				h.issue(a, h.id(20*time.Millisecond, 3, 0))
				h.release(la, ms(20*time.Millisecond))
				h.reserve(h.acquire(a, 4), ms(2*time.Second))
				h.issue(a, h.id(10*time.Millisecond, 4, 0))
			},
			want: map[string]int64{"order-generator": 1},
		},
		{
			// An ID in a tick the store has not reserved: the acquisition wrote no
			// reservation, or one below the ID.
			name: "issued above the store's mark",
			plant: func(h *history) {
				a := h.node(0)
				la := h.acquire(a, 3)
				h.at(10 * time.Millisecond)
				h.issue(a, h.id(10*time.Millisecond, 3, 0))
				h.reserve(la, ms(50*time.Millisecond))
				h.issue(a, h.id(51*time.Millisecond, 3, 0))
			},
			want: map[string]int64{"reserved": 2},
		},
		{
			// A new holder in the very tick of the mark it found, with a sequence value
			// the earlier holder did not use: no duplicate, no order violation, but
			// not above the mark.
			name: "not above the mark found at acquisition",
			plant: func(h *history) {
				b, _ := h.handOver(ms(20 * time.Millisecond))
				h.issue(b, h.id(20*time.Millisecond, 3, 5))
			},
			want: map[string]int64{"above": 1},
		},
		{
			name: "issued with a value never acquired",
			plant: func(h *history) {
				a := h.node(0)
				h.reserve(h.acquire(a, 3), ms(2*time.Second))
				h.issue(a, h.id(0, 7, 0))
			},
			want: map[string]int64{"live": 1},
		},
		{
			name: "decided before the acquisition",
			plant: func(h *history) {
				a := h.node(0)
				h.at(time.Second)
				h.reserve(h.acquire(a, 3), ms(3*time.Second))
				h.issueDecided(a, simStart+int64(999*time.Millisecond), h.id(time.Second, 3, 0))
			},
			want: map[string]int64{"live": 1},
		},
		{
			name: "decided after the release",
			plant: func(h *history) {
				a := h.node(0)
				la := h.reserve(h.acquire(a, 3), ms(2*time.Second))
				h.issue(a, h.id(0, 3, 0))
				h.at(100 * time.Millisecond)
				h.release(la, ms(200*time.Millisecond))
				h.at(150 * time.Millisecond)
				h.issue(a, h.id(150*time.Millisecond, 3, 0))
			},
			want: map[string]int64{"live": 1},
		},
		{
			name: "decided after the lease expired",
			plant: func(h *history) {
				a := h.node(0)
				h.reserve(h.acquire(a, 3), ms(10*time.Second))
				h.issue(a, h.id(0, 3, 0))
				h.at(histTTL + time.Millisecond)
				h.issue(a, h.id(histTTL+time.Millisecond, 3, 0))
			},
			want: map[string]int64{"live": 1},
		},
		{
			name: "out of range: another pool, not positive",
			plant: func(h *history) {
				a := h.node(0)
				h.reserve(h.acquire(a, 3), ms(2*time.Second))
				h.issue(a, h.idIn(1, 0, 3, 0), 0, -h.id(0, 3, 0))
			},
			want: map[string]int64{"range": 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t)
			tc.plant(h)
			h.expect(tc.want)
		})
	}
}

// The segment checker: each planted anomaly is reported under its kind, and a clean
// history passes.
func TestSegmentCheckerCatchesPlantedAnomalies(t *testing.T) {
	const stores = 3
	// newSeg returns a world of three stores and an allocator node holding the block
	// 10..19 of store 1 (IDs 31, 34, ..., 58).
	newSeg := func() (*SegWorld, *segNode) {
		w := &SegWorld{sim: New(1, simStart), byKind: map[string]int64{}, issued: make([]intervals, stores)}
		for k := 0; k < stores; k++ {
			w.stores = append(w.stores, nil) // only their number counts
		}
		n := &segNode{Node: &Node{ID: 0, sim: w.sim}, w: w, inc: 1,
			held: map[int][]segment.Block{1: {{First: 10, Last: 19}}}, returned: map[int][]segment.Block{}}
		return w, n
	}
	id := func(k, c int64) flurry.ID { return flurry.ID(c*stores + k) }
	for _, tc := range []struct {
		name  string
		plant func(w *SegWorld, n *segNode)
		want  map[string]int64
	}{
		{"clean", func(w *SegWorld, n *segNode) {
			n.check(id(1, 10))
			n.check(id(1, 11))
			n.held[2] = []segment.Block{{First: 20, Last: 29}}
			n.check(id(2, 20)) // another store, above the last ID
		}, map[string]int64{}},
		{"duplicate across allocators", func(w *SegWorld, n *segNode) {
			n.check(id(1, 12))
			m := &segNode{Node: &Node{ID: 1, sim: w.sim}, w: w, inc: 1,
				held: map[int][]segment.Block{1: {{First: 10, Last: 19}}}, returned: map[int][]segment.Block{}}
			m.check(id(1, 12))
		}, map[string]int64{"duplicate": 1}},
		{"order within an allocator", func(w *SegWorld, n *segNode) {
			n.check(id(1, 12))
			n.check(id(1, 11))
		}, map[string]int64{"order-allocator": 1}},
		{"a value of no range held", func(w *SegWorld, n *segNode) {
			n.check(id(1, 25))
		}, map[string]int64{"held": 1}},
		{"a value of a range handed back", func(w *SegWorld, n *segNode) {
			n.check(id(1, 10))
			n.returned[1] = []segment.Block{{First: 15, Last: 19}}
			n.check(id(1, 15))
		}, map[string]int64{"held": 1}},
		{"not positive", func(w *SegWorld, n *segNode) {
			n.check(0)
		}, map[string]int64{"range": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, n := newSeg()
			tc.plant(w, n)
			if !maps.Equal(w.byKind, tc.want) {
				t.Errorf("violations %v; want %v", w.byKind, tc.want)
				for _, v := range w.first {
					t.Log(v)
				}
			}
		})
	}
}
