package checker

import "time"

// names interns strings (node, client and error names) so that each op costs a few
// integers instead of three string headers.
type names struct {
	list []string
	idx  map[string]uint32
}

func (n *names) id(s string) uint32 {
	if i, ok := n.idx[s]; ok {
		return i
	}
	if n.idx == nil {
		n.idx = map[string]uint32{}
	}
	i := uint32(len(n.list))
	n.list = append(n.list, s)
	n.idx[s] = i
	return i
}

// rec is one op as stored: 56 bytes plus its IDs in the namespace's arena.
type rec struct {
	start, end int64 // unix nanoseconds
	asked      int64 // Op.Asked, or start; never after start
	aside      bool  // Op.NoAvailability
	chunk, off uint32
	n          uint32
	node       uint32
	client     uint32
	err        uint32 // index in Checker.errs; errs.list[0] is ""
}

// arena stores a namespace's IDs in chunks that grow up to maxChunk entries. An
// op's IDs never span two chunks, so they are always one sub-slice and Add copies
// them once.
type arena struct {
	chunks [][]int64
	total  int64
}

const (
	minChunk = 1 << 12
	maxChunk = 1 << 20
)

// put copies ids into the arena and returns where they are.
func (a *arena) put(ids []int64) (chunk, off uint32) {
	n := len(ids)
	last := len(a.chunks) - 1
	if last < 0 || cap(a.chunks[last])-len(a.chunks[last]) < n {
		size := minChunk
		if last >= 0 {
			size = min(2*cap(a.chunks[last]), maxChunk)
		}
		size = max(size, n)
		a.chunks = append(a.chunks, make([]int64, 0, size))
		last++
	}
	c := a.chunks[last]
	off = uint32(len(c))
	a.chunks[last] = append(c, ids...)
	a.total += int64(n)
	return uint32(last), off
}

// get returns the IDs of r; the caller must not modify them.
func (a *arena) get(r *rec) []int64 {
	if r.n == 0 {
		return nil
	}
	return a.chunks[r.chunk][r.off : r.off+r.n : r.off+r.n]
}

// nsData is everything the checker keeps for one namespace.
type nsData struct {
	Namespace
	ops []rec
	ids arena
}

// Add records one op. It copies op.IDs, so the caller may reuse the slice. Safe for
// concurrent use.
func (c *Checker) Add(op Op) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.byName[op.Namespace]
	if !ok {
		c.unknown[op.Namespace]++
		return
	}
	ns := c.nss[i]
	r := rec{
		start:  op.Start.UnixNano(),
		end:    op.End.UnixNano(),
		n:      uint32(len(op.IDs)),
		node:   c.nodes.id(op.Node),
		client: c.clients.id(op.Client),
		err:    c.errs.id(op.Err),
		aside:  op.NoAvailability,
	}
	if r.end < r.start {
		r.end = r.start // a clock read twice cannot go back; keep the sweep sound
	}
	r.asked = r.start
	if !op.Asked.IsZero() {
		r.asked = min(op.Asked.UnixNano(), r.start)
	}
	if len(op.IDs) > 0 {
		r.chunk, r.off = ns.ids.put(op.IDs)
	}
	ns.ops = append(ns.ops, r)
	if c.first == 0 || r.start < c.first {
		c.first = r.start
	}
}

// Restarted records that a node's process was (re)started. Safe for concurrent use.
func (c *Checker) Restarted(r Restart) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restarts = append(c.restarts, r)
}

// op rebuilds the Op of r, with a copy of its IDs.
func (c *Checker) op(ns *nsData, r *rec) Op {
	return Op{
		Client:         c.clients.list[r.client],
		Node:           c.nodes.list[r.node],
		Namespace:      ns.Name,
		Start:          time.Unix(0, r.start),
		End:            time.Unix(0, r.end),
		IDs:            append([]int64(nil), ns.ids.get(r)...),
		Err:            c.errs.list[r.err],
		Asked:          time.Unix(0, r.asked),
		NoAvailability: r.aside,
	}
}
