package checker

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// maxDupTrack bounds how many distinct duplicated IDs are traced back to their ops
// (to place them in windows and nodes and to give examples). More are still counted.
const maxDupTrack = 1 << 20

// maxNodeValues bounds NodeResult.NodeValues.
const maxNodeValues = 16

// Check checks everything added so far against the given fault windows and returns
// the result. It may be called more than once; Add and Restarted wait while it runs.
// Its memory peak is 8 bytes per ID of the largest namespace (a sorted copy) on
// top of what the checker holds.
func (c *Checker) Check(windows []Window) Result {
	c.mu.Lock()
	defer c.mu.Unlock()

	res := Result{}
	if len(c.unknown) > 0 {
		res.Unknown = maps.Clone(c.unknown)
	}
	var last int64
	for _, ns := range c.nss {
		for i := range ns.ops {
			last = max(last, ns.ops[i].end)
		}
	}
	if c.first != 0 {
		res.Start, res.End = time.Unix(0, c.first), time.Unix(0, last)
	}
	res.Restarts = slices.Clone(c.restarts)
	slices.SortStableFunc(res.Restarts, func(a, b Restart) int { return a.At.Compare(b.At) })

	k := &run{c: c, first: c.first, last: last, restarts: map[uint32][]int64{}}
	for _, r := range res.Restarts {
		if id, ok := c.nodes.idx[r.Node]; ok {
			k.restarts[id] = append(k.restarts[id], r.At.UnixNano())
		}
	}
	for _, w := range windows {
		k.wins = append(k.wins, winAcc{s: w.Start.UnixNano(), e: w.End.UnixNano(), counts: make([]Counts, len(c.nss))})
	}
	deliveries := make([][]int64, len(c.nss))
	for i, ns := range c.nss {
		k.nsi = i
		var nr NamespaceResult
		nr, deliveries[i] = k.namespace(ns)
		res.Totals.add(nr.Counts)
		res.Namespaces = append(res.Namespaces, nr)
	}
	for wi, w := range windows {
		acc := &k.wins[wi]
		wr := WindowResult{Window: w}
		secs := w.End.Sub(w.Start).Seconds()
		for i, ns := range c.nss {
			wn := WindowNamespace{Name: ns.Name, Counts: acc.counts[i]}
			if secs > 0 {
				wn.IDsPerSecond = float64(wn.IDs) / secs
			}
			a, b := longestGap(deliveries[i], acc.s, acc.e)
			wn.Gap = Gap{From: time.Unix(0, a), To: time.Unix(0, b)}
			wr.Counts.add(wn.Counts)
			wr.Namespaces = append(wr.Namespaces, wn)
		}
		if secs > 0 {
			wr.IDsPerSecond = float64(wr.IDs) / secs
		}
		res.Windows = append(res.Windows, wr)
	}
	return res
}

// run is the state of one Check.
type run struct {
	c           *Checker
	first, last int64
	restarts    map[uint32][]int64 // node -> restart instants, sorted
	wins        []winAcc
	nsi         int // namespace being checked
}

// winAcc accumulates the counts of one window, per namespace.
type winAcc struct {
	s, e   int64
	counts []Counts
}

type field int

const (
	fRequests field = iota
	fAnswered
	fIDs
	fDuplicates
	fOrder
	fRange
)

// bump adds n to a field of the current namespace's counts in every window that
// contains instant t (half-open: [Start, End)).
func (k *run) bump(t int64, f field, n int64) {
	for i := range k.wins {
		w := &k.wins[i]
		if t < w.s || t >= w.e {
			continue
		}
		c := &w.counts[k.nsi]
		switch f {
		case fRequests:
			c.Requests += n
		case fAnswered:
			c.Answered += n
		case fIDs:
			c.IDs += n
		case fDuplicates:
			c.Duplicates += n
		case fOrder:
			c.OrderViolations += n
		case fRange:
			c.OutOfRange += n
		}
	}
}

// nodeAcc accumulates one node's part of a namespace.
type nodeAcc struct {
	Counts
	values []layout.NodeValues
}

func (a *nodeAcc) noteValues(nv layout.NodeValues) {
	if len(a.values) >= maxNodeValues || slices.Contains(a.values, nv) {
		return
	}
	a.values = append(a.values, nv)
}

// namespace checks one namespace. It also returns the sorted instants at which an
// op delivered IDs, for the windows' gaps.
func (k *run) namespace(ns *nsData) (NamespaceResult, []int64) {
	c := k.c
	nr := NamespaceResult{Name: ns.Name, Kind: ns.Kind, Errors: map[string]int64{}}
	if ns.Kind.acrossRestarts() {
		nr.OrderScope = "per node, across restarts"
	} else {
		nr.OrderScope = "per node process lifetime"
	}
	nodes := map[uint32]*nodeAcc{}
	node := func(id uint32) *nodeAcc {
		a := nodes[id]
		if a == nil {
			a = &nodeAcc{}
			nodes[id] = a
		}
		return a
	}
	var deliveries []int64

	// Pass 1: counts, range, order inside each op.
	for i := range ns.ops {
		r := &ns.ops[i]
		if r.aside && r.n == 0 {
			continue // no ID, and no part in the availability figures
		}
		na := node(r.node)
		if !r.aside {
			nr.Requests++
			na.Requests++
			k.bump(r.start, fRequests, 1)
			if r.err == 0 {
				nr.Answered++
				na.Answered++
				k.bump(r.start, fAnswered, 1)
			} else {
				nr.Errors[c.errs.list[r.err]]++
			}
		}
		if r.n == 0 {
			continue
		}
		ids := ns.ids.get(r)
		nr.IDs += int64(len(ids))
		na.IDs += int64(len(ids))
		k.bump(r.end, fIDs, int64(len(ids)))
		if !r.aside {
			deliveries = append(deliveries, r.end)
		}
		k.checkRange(ns, r, ids, na, &nr)
		for j := 1; j < len(ids); j++ {
			if ids[j] > ids[j-1] {
				continue
			}
			nr.OrderViolations++
			na.OrderViolations++
			k.bump(r.end, fOrder, 1)
			if len(nr.OrderExamples) < MaxExamples {
				op := c.op(ns, r)
				nr.OrderExamples = append(nr.OrderExamples, OrderViolation{
					Node: op.Node, Within: true, Prev: ids[j-1], Next: ids[j], Earlier: op, Later: op,
				})
			}
		}
	}
	slices.Sort(deliveries)

	// Pass 2: real-time order across ops of one node (and lifetime).
	k.checkOrder(ns, &nr, node)

	// Pass 3: duplicates.
	k.checkDuplicates(ns, &nr, node)

	a, b := longestGap(deliveries, k.first, k.last)
	nr.Gap = Gap{From: time.Unix(0, a), To: time.Unix(0, b)}

	for id, na := range nodes {
		res := NodeResult{Node: c.nodes.list[id], Counts: na.Counts, Lifetimes: 1}
		for _, t := range k.restarts[id] {
			if t > k.first && t <= k.last {
				res.Lifetimes++
			}
		}
		if ns.Layout != nil {
			for _, nv := range na.values {
				res.NodeValues = append(res.NodeValues, ns.Layout.FormatNodeValues(nv))
			}
		}
		nr.Nodes = append(nr.Nodes, res)
	}
	slices.SortFunc(nr.Nodes, func(a, b NodeResult) int { return cmp.Compare(a.Node, b.Node) })
	return nr, deliveries
}

// checkRange counts the IDs of r outside the namespace's range.
func (k *run) checkRange(ns *nsData, r *rec, ids []int64, na *nodeAcc, nr *NamespaceResult) {
	bad := func(id int64, reason func() string) {
		nr.OutOfRange++
		na.OutOfRange++
		k.bump(r.end, fRange, 1)
		if len(nr.OutOfRangeExamples) < MaxExamples {
			nr.OutOfRangeExamples = append(nr.OutOfRangeExamples, OutOfRange{ID: id, Reason: reason(), Op: k.c.op(ns, r)})
		}
	}
	notPositive := func() string { return "not positive" }
	l := ns.Layout
	if l == nil || ns.Kind == Segment {
		for _, id := range ids {
			if id <= 0 {
				bad(id, notPositive)
			}
		}
		return
	}
	maxTick := int64(math.MaxInt64)
	if ns.MaxAhead > 0 {
		maxTick = l.TickOf(time.Unix(0, r.end+int64(ns.MaxAhead)))
	}
	var prev layout.NodeValues
	havePrev := false
	for _, id := range ids {
		if id <= 0 {
			bad(id, notPositive)
			continue
		}
		p, err := l.Decompose(flurry.ID(id))
		if err != nil {
			bad(id, func() string { return fmt.Sprintf("bits set above the layout's %d bits", l.Bits()) })
			continue
		}
		if p.Tick > maxTick {
			bad(id, func() string {
				return fmt.Sprintf("time %s is %v after it was received (more than %v)",
					l.TickTime(p.Tick).Format(time.RFC3339Nano), l.TickTime(p.Tick).Sub(time.Unix(0, r.end)).Round(time.Millisecond), ns.MaxAhead)
			})
			continue
		}
		if !havePrev || p.Nodes != prev {
			na.noteValues(p.Nodes)
			prev, havePrev = p.Nodes, true
		}
	}
}

// span is an op with IDs reduced to what the order sweep needs.
type span struct {
	start, end int64
	lo, hi     int64 // smallest and largest ID
	i          int   // index in nsData.ops
}

// checkOrder checks real-time order across the ops of each node: when op A was
// answered before op B was sent (or its IDs asked for: Op.Asked), max(A) < min(B).
// Ops are swept by time: B is compared with the largest ID of all ops that ended
// before it started.
func (k *run) checkOrder(ns *nsData, nr *NamespaceResult, node func(uint32) *nodeAcc) {
	type key struct {
		node uint32
		life int
	}
	groups := map[key][]span{}
	for i := range ns.ops {
		r := &ns.ops[i]
		if r.n == 0 {
			continue
		}
		life := 0
		if !ns.Kind.acrossRestarts() {
			rs := k.restarts[r.node]
			ls, le := lifetime(rs, r.asked), lifetime(rs, r.end)
			if ls != le {
				nr.Unordered++
				continue
			}
			life = ls
		}
		ids := ns.ids.get(r)
		lo, hi := ids[0], ids[0]
		for _, id := range ids[1:] {
			lo, hi = min(lo, id), max(hi, id)
		}
		kk := key{r.node, life}
		groups[kk] = append(groups[kk], span{start: r.asked, end: r.end, lo: lo, hi: hi, i: i})
	}
	keys := slices.Collect(maps.Keys(groups))
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.life, b.life))
	})
	for _, kk := range keys {
		byStart := groups[kk]
		byEnd := slices.Clone(byStart)
		slices.SortFunc(byStart, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.i, b.i)) })
		slices.SortFunc(byEnd, func(a, b span) int { return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.i, b.i)) })
		j, best := 0, -1 // best: index in byEnd of the finished op with the largest ID
		for _, b := range byStart {
			for ; j < len(byEnd) && byEnd[j].end < b.start; j++ {
				if best < 0 || byEnd[j].hi > byEnd[best].hi {
					best = j
				}
			}
			if best < 0 || byEnd[best].hi < b.lo {
				continue
			}
			a := byEnd[best]
			nr.OrderViolations++
			node(kk.node).OrderViolations++
			k.bump(b.end, fOrder, 1)
			if len(nr.OrderExamples) < MaxExamples {
				rs := k.restarts[kk.node]
				nr.OrderExamples = append(nr.OrderExamples, OrderViolation{
					Node:          k.c.nodes.list[kk.node],
					Prev:          a.hi,
					Next:          b.lo,
					Earlier:       k.c.op(ns, &ns.ops[a.i]),
					Later:         k.c.op(ns, &ns.ops[b.i]),
					AcrossRestart: lifetime(rs, a.end) != lifetime(rs, b.start),
				})
			}
		}
	}
}

// lifetime returns the number of restarts at or before t: the index of the process
// lifetime t falls in.
func lifetime(restarts []int64, t int64) int {
	return sort.Search(len(restarts), func(i int) bool { return restarts[i] > t })
}

// checkDuplicates sorts a copy of the namespace's IDs and counts repeats, then
// traces up to maxDupTrack repeated IDs back to the ops that returned them.
func (k *run) checkDuplicates(ns *nsData, nr *NamespaceResult, node func(uint32) *nodeAcc) {
	all := make([]int64, 0, ns.ids.total)
	for _, ch := range ns.ids.chunks {
		all = append(all, ch...)
	}
	slices.Sort(all)
	var dups []int64 // distinct repeated IDs, sorted
	var total int64
	for i := 1; i < len(all); i++ {
		if all[i] != all[i-1] {
			continue
		}
		total++
		if (len(dups) == 0 || dups[len(dups)-1] != all[i]) && len(dups) < maxDupTrack {
			dups = append(dups, all[i])
		}
	}
	all = nil
	nr.Duplicates = total
	if total == 0 {
		return
	}
	set := make(map[int64]struct{}, len(dups))
	for _, d := range dups {
		set[d] = struct{}{}
	}
	lo, hi := dups[0], dups[len(dups)-1]
	type occ struct {
		id int64
		i  int
	}
	var occs []occ
	for i := range ns.ops {
		r := &ns.ops[i]
		for _, id := range ns.ids.get(r) {
			if id < lo || id > hi {
				continue
			}
			if _, ok := set[id]; ok {
				occs = append(occs, occ{id, i})
			}
		}
	}
	slices.SortFunc(occs, func(a, b occ) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(ns.ops[a.i].end, ns.ops[b.i].end), cmp.Compare(a.i, b.i))
	})
	var placed int64
	for s := 0; s < len(occs); {
		e := s + 1
		for e < len(occs) && occs[e].id == occs[s].id {
			e++
		}
		for _, o := range occs[s+1 : e] {
			r := &ns.ops[o.i]
			node(r.node).Duplicates++
			k.bump(r.end, fDuplicates, 1)
			placed++
		}
		if len(nr.DuplicateExamples) < MaxExamples {
			d := Duplicate{ID: occs[s].id, Count: e - s}
			for _, o := range occs[s:min(e, s+4)] {
				d.Ops = append(d.Ops, k.c.op(ns, &ns.ops[o.i]))
			}
			nr.DuplicateExamples = append(nr.DuplicateExamples, d)
		}
		s = e
	}
	nr.UnplacedDuplicates = total - placed
}

// longestGap returns the longest interval inside [from, to] that holds no instant
// of ts (sorted), counting from and to as its ends.
func longestGap(ts []int64, from, to int64) (a, b int64) {
	if to < from {
		return from, from
	}
	prev := from
	a, b = from, from
	for i := sort.Search(len(ts), func(i int) bool { return ts[i] >= from }); i < len(ts) && ts[i] <= to; i++ {
		if ts[i]-prev > b-a {
			a, b = prev, ts[i]
		}
		prev = ts[i]
	}
	if to-prev > b-a {
		a, b = prev, to
	}
	return a, b
}
