package snowflake

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flurryid/flurry/layout"
)

// ErrLeaseLost is returned by a Managed generator that holds no valid grant: none
// was given yet, the last one ran out before it was renewed (the lease could expire
// in the store, and another process could take the node value), or the reserved
// window of ticks is used up because the store has not confirmed a new one. Nothing
// was issued. The generator resumes by itself when its lease session grants again.
var ErrLeaseLost = errors.New("snowflake: no valid lease for a node value")

// Grant gives a Managed generator the right to issue IDs for one node value, as a
// lease session (package lease) does after each acquisition and renewal.
type Grant struct {
	// Node is the node value the lease holds.
	Node layout.NodeValues
	// Above is the value's high-water mark left by earlier holders, in Unix
	// milliseconds: the generator issues only in ticks that start after it.
	Above int64
	// Through is the end of the reservation written to the store, in Unix
	// milliseconds: the generator issues only in ticks that start at or before it.
	Through int64
	// Until is when the right ends, in nanoseconds of the generator's clock: at and
	// after it Next returns ErrLeaseLost. A session sets it before the lease could
	// expire in the store, with a margin.
	Until int64
}

// Grant installs or extends the generator's right to issue. For the node value it
// already issues for, Grant extends Through and Until and raises the floor to Above.
// For another node value, the generator moves to it: IDs from then on carry the new
// value and start above its mark; the old value is released in the in-process guard.
// Grant fails on a generator that is not Managed, on a node value that does not fit
// the layout, and (ErrInUse) on a node value another generator of this process holds.
func (g *Generator) Grant(gr Grant) error {
	if !g.managed {
		return fmt.Errorf("snowflake: Grant on a generator that is not Managed")
	}
	mask, err := g.codec.NodeMask(gr.Node)
	if err != nil {
		return fmt.Errorf("snowflake: grant: %w", err)
	}
	g.grantMu.Lock()
	defer g.grantMu.Unlock()
	if g.closed.Load() {
		return ErrClosed
	}
	floor := max(g.codec.TickAt(gr.Above*int64(time.Millisecond)), 0)
	prev := g.active.Load()
	through := min(g.codec.TickAt(gr.Through*int64(time.Millisecond)), g.maxTick)
	cur := g.active.Load()
	if cur == nil || cur.mask != mask {
		var next *node
		for _, n := range g.nodes {
			if n.mask == mask {
				next = n // held before: its lanes remember what it issued
			}
		}
		if next == nil {
			next = &node{values: gr.Node, mask: mask, lanes: make([]lane, g.lanesN), key: g.regKey(mask)}
			g.nodes = append(g.nodes, next)
		}
		registry.Lock()
		if registry.live[next.key] {
			registry.Unlock()
			return g.inUse(gr.Node)
		}
		registry.live[next.key] = true
		if cur != nil {
			cur.until.Store(math.MinInt64)
			delete(registry.live, cur.key)
		}
		registry.Unlock()
		cur = next
		// IDs on the new value must still be larger than every ID returned before:
		// start after the last tick the old value issued in.
		if prev != nil {
			floor = max(floor, prev.lastTick(g))
		}
	}
	// Mark the floor tick used up in every lane, so the next ID is in a later tick.
	floorState := uint64(floor)<<g.stateShift | uint64(g.laneMask)
	for i := range cur.lanes {
		st := &cur.lanes[i].state
		for old := st.Load(); old < floorState && !st.CompareAndSwap(old, floorState); old = st.Load() {
		}
	}
	cur.through.Store(through)
	cur.until.Store(gr.Until)
	g.lost.Store(nil)
	g.active.Store(cur)
	return nil
}

// lastTick returns the latest tick any lane of n issued in.
func (n *node) lastTick(g *Generator) int64 {
	var t int64
	for i := range n.lanes {
		t = max(t, int64(n.lanes[i].state.Load()>>g.stateShift))
	}
	return t
}

// IssuedThrough returns, in Unix milliseconds, the start of the latest tick in which
// the generator may have issued an ID for its current node value, counting calls
// that were already past the fence when it was revoked. Call it after Revoke: a lease
// session releases the value with this mark, which is usually far below the end of
// its reservation, so the next holder need not wait for the reservation to pass.
func (g *Generator) IssuedThrough() int64 {
	cur := g.active.Load()
	if cur == nil {
		return 0
	}
	now, err := g.tickAt(g.clk.Now())
	if err != nil {
		now = 0
	}
	// A call past the fence issues at most one tick after the state, or at its own
	// reading of the clock (no later than now) plus what it may borrow.
	t := min(max(cur.lastTick(g)+1, now+g.aheadTicks), g.maxTick)
	return g.l.TickTime(t).UnixMilli()
}

// Revoke stops a Managed generator at once: Next returns ErrLeaseLost, with cause in
// the message, until the next Grant. A lease session calls it when the lease is lost.
func (g *Generator) Revoke(cause error) {
	g.grantMu.Lock()
	defer g.grantMu.Unlock()
	if cause != nil {
		g.lost.Store(&cause)
	}
	if cur := g.active.Load(); cur != nil {
		cur.until.Store(math.MinInt64)
	}
}

// lostErr explains why a managed generator refuses.
func (g *Generator) lostErr(nd *node, tick int64) error {
	cause := ""
	if c := g.lost.Load(); c != nil {
		cause = " (" + (*c).Error() + ")"
	}
	switch {
	case nd == nil:
		return fmt.Errorf("%w: no node value granted yet%s", ErrLeaseLost, cause)
	case tick > nd.through.Load():
		return fmt.Errorf("%w: node %s: the reserved window ends at %s and the store has not confirmed a new one%s",
			ErrLeaseLost, g.l.FormatNodeValues(nd.values), g.l.TickTime(nd.through.Load()+1).Format(time.RFC3339Nano), cause)
	}
	if cause != "" {
		return fmt.Errorf("%w: node %s: the lease was lost%s; issuing resumes when a lease is held again", ErrLeaseLost, g.l.FormatNodeValues(nd.values), cause)
	}
	return fmt.Errorf("%w: node %s: the lease was not renewed in time, so another process may hold the value; issuing resumes when it is renewed",
		ErrLeaseLost, g.l.FormatNodeValues(nd.values))
}
