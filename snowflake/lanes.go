package snowflake

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
)

// node is one node value (the primary or a standby) with one state per lane.
type node struct {
	values layout.NodeValues
	mask   int64
	lanes  []*lane
	lane0  *lane // lanes[0], which Generator.active points to while n is in use
	// until (clock ns) and through (tick) fence a managed generator: it issues
	// nothing at or after until, and no tick after through. Unmanaged: no limit.
	// Each lane's fast word holds both as one limit for the fast path (setFence).
	until   atomic.Int64
	through atomic.Int64
	key     string // in the in-process registry
}

// lane holds the position of the last ID issued from it: tick << stateShift | sequence.
// It is padded to a cache line so lanes used from different CPUs do not share one;
// mu and serialUntil, used by the mutex and hybrid variants, share the state's line
// because whoever takes the lock touches the state next.
type lane struct {
	state atomic.Uint64
	// fast is what the fast path checks before it issues, in one word: the node's
	// fence (until and through, as clock ns since the epoch below which both allow
	// an ID: fenceLimit) and whether the lane is serialised (mutex variant, or the
	// hybrid after contention). A limit l >= 0 is stored as l when callers may add
	// without the mutex and as ^l (negative) when they take it. Every write is a
	// compare-and-swap that keeps the other half (setLimit, setSerial), so a fence
	// that ends is never undone by the hybrid going back to lock-free.
	fast        atomic.Int64
	mu          sync.Mutex
	serialUntil atomic.Int64 // hybrid: clock ns until which callers take mu
	idBits      int64        // the node value and the lane's index in the ID: mask | laneIdx << laneBits << seqShift
	idx         int64        // the lane's index, for the slow path
	nd          *node        // the node the lane is of
	_           [16]byte
}

// newNode makes the node of node value nv, whose field bits are mask.
func (g *Generator) newNode(nv layout.NodeValues, mask int64) *node {
	n := &node{values: nv, mask: mask, key: g.regKey(mask)}
	n.lanes = g.newLanes(n)
	n.lane0 = n.lanes[0]
	return n
}

// newLanes makes the lanes of node n; their fence is 0 (nothing
// issues) until setFence. Under the mutex variant they are serialised for good.
func (g *Generator) newLanes(n *node) []*lane {
	lanes := make([]*lane, g.lanesN)
	for i := range lanes {
		// Lanes split the sequence field, lane 0 lowest.
		lanes[i] = &lane{idBits: n.mask | int64(i)<<g.laneBits<<g.seqShift, idx: int64(i), nd: n}
		if g.contention == contendMutex {
			lanes[i].setSerial(true)
		}
	}
	return lanes
}

// setLimit sets the fence half of ln.fast to limit (>= 0), keeping the other half.
func (ln *lane) setLimit(limit int64) {
	for {
		f := ln.fast.Load()
		v := limit
		if f < 0 {
			v = ^limit
		}
		if ln.fast.CompareAndSwap(f, v) {
			return
		}
	}
}

// fenceLimit is the fast path's form of a fence: the clock ns since the epoch below
// which an ID is allowed both by until (clock ns) and by through (its last tick),
// 0 when none is; it saturates instead of overflowing.
func (g *Generator) fenceLimit(until, through int64) int64 {
	var u int64
	switch {
	case until <= g.epochNs:
		u = 0
	case g.epochNs < 0 && until > math.MaxInt64+g.epochNs:
		u = math.MaxInt64
	default:
		u = until - g.epochNs
	}
	t := int64(math.MaxInt64)
	if through < 0 {
		t = 0
	} else if through < math.MaxInt64/g.unitNs-1 {
		t = (through + 1) * g.unitNs
	}
	return min(u, t)
}

// setFence sets node n's fence: nothing at or after clock ns until, no tick after
// through. grantMu or construction serialises the writers.
func (n *node) setFence(g *Generator, until, through int64) {
	n.through.Store(through)
	n.until.Store(until)
	limit := g.fenceLimit(until, through)
	for _, ln := range n.lanes {
		ln.setLimit(limit)
	}
}

// end ends node n's fence: every later call goes to the slow path and refuses.
func (n *node) end() {
	n.until.Store(math.MinInt64)
	for _, ln := range n.lanes {
		ln.setLimit(0)
	}
}

// Lane is a share of a generator's sequence values for one goroutine: the per-CPU
// mode. A generator with Options.Lanes = L splits each tick's sequence values into L
// lanes; a Lane issues only from its own, so goroutines on different lanes never
// touch the same memory. IDs stay unique and a later tick's IDs are larger than an
// earlier tick's, but inside one tick IDs are ordered by lane, not by call: an ID
// from lane 1 can be larger than an ID lane 0 returns later in the same tick. Each
// lane holds 1/L of the tick's IDs, so the per-node cap is unchanged, and a lane
// runs out (and waits or borrows) L times sooner.
//
// A Lane is safe for concurrent use, but it is fastest held by one goroutine.
type Lane struct {
	g   *Generator
	idx int
}

// Lane hands out the generator's lanes in turn: 0, 1, ..., L-1, then 0 again. Take
// one per goroutine, with at most L goroutines; Generator.Next uses lane 0. On a
// generator fed by a lease (lease.NewGenerator), a Lane may be taken before the
// first grant: like Next, its calls refuse (lease.ErrLost) until a grant arrives.
func (g *Generator) Lane() *Lane {
	return &Lane{g: g, idx: int(g.lanes.Add(1)-1) % g.lanesN}
}

// Next returns a new ID from the lane: larger than every ID the lane returned before.
func (l *Lane) Next(ctx context.Context) (flurry.ID, error) {
	return l.g.next(ctx, l.idx)
}

// NextN fills dst from the lane, like Generator.NextN.
func (l *Lane) NextN(ctx context.Context, dst []flurry.ID) (int, error) {
	return l.g.nextN(ctx, l.idx, dst)
}
