package snowflake

import (
	"errors"
	"fmt"
	"time"

	"github.com/flurryid/flurry/internal/fence"
)

// A generator made by lease.NewGenerator is managed: it takes its node value from
// the grants of its lease session, through the fence.Target below, and refuses
// (fence.ErrLost, exported as lease.ErrLost) while it holds no valid grant. None of
// this is in the package's API: lease passes a fence.Fence in Options.Fence, New
// attaches the target to it, and lease finds it again with fence.TargetOf, through
// the Fence the generator embeds.

// fenced is the name under which a Generator embeds its *fence.Fence.
type fenced = fence.Fence

// target is a managed generator's fence.Target.
type target struct{ g *Generator }

func (t target) Grant(gr fence.Grant) error { return t.g.grant(gr) }
func (t target) Revoke(cause error)         { t.g.revoke(cause) }
func (t target) IssuedThrough() int64       { return t.g.issuedThrough() }

// grant is fence.Target.Grant: it installs or extends the generator's right to
// issue. Moving to another node value releases the old one in the in-process guard.
func (g *Generator) grant(gr fence.Grant) error {
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
	prev := g.activeNode()
	through := min(g.codec.TickAt(gr.Through*int64(time.Millisecond)), g.maxTick)
	cur := g.activeNode()
	if cur == nil || cur.mask != mask {
		var next *node
		for _, n := range g.nodes {
			if n.mask == mask {
				next = n // held before: its lanes remember what it issued
			}
		}
		if next == nil {
			next = g.newNode(gr.Node, mask)
			g.nodes = append(g.nodes, next)
		}
		registry.Lock()
		if registry.live[next.key] {
			registry.Unlock()
			return g.inUse(gr.Node)
		}
		registry.live[next.key] = true
		if cur != nil {
			cur.end()
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
	cur.setFence(g, gr.Until, through)
	if gr.Cause != nil {
		g.lost.Store(&gr.Cause)
	} else {
		g.lost.Store(nil)
	}
	g.active.Store(cur.lane0)
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

// issuedThrough is fence.Target.IssuedThrough. A lease session calls it after
// revoke and releases the value with this mark, which is usually far below the end
// of its reservation, so the next holder need not wait for the reservation to pass.
func (g *Generator) issuedThrough() int64 {
	cur := g.activeNode()
	if cur == nil {
		return 0
	}
	now, err := g.tickAt(g.clk.Now())
	if err != nil {
		now = 0
	}
	// A call that passed the fence before the revocation commits only from the
	// state it loaded, by compare-and-swap: in the clock tick it read (no later
	// than now), in the state's tick, or in the tick after it (a full tick taken
	// by Borrow or Logical). Every other call loads the state again and meets the
	// fence. So lastTick+1 and now bound them all, whatever the policies may
	// borrow: counting MaxDrift here would leave a mark up to a minute ahead of
	// the clock on every release, and every later holder of the scope would start
	// above it.
	t := min(max(cur.lastTick(g)+1, now), g.maxTick)
	return g.l.TickTime(t).UnixMilli()
}

// revoke is fence.Target.Revoke: Next refuses, with cause in the message, until the
// next grant. A lease session calls it when the lease is lost and when it closes.
func (g *Generator) revoke(cause error) {
	g.grantMu.Lock()
	defer g.grantMu.Unlock()
	if cause != nil {
		g.lost.Store(&cause)
	}
	if cur := g.activeNode(); cur != nil {
		cur.end()
	}
}

// lostErr explains why a managed generator refuses. A cause that is the lease
// journal's failure (fence.ErrJournal) is wrapped as well as named, so that a
// server can tell its callers to free disk space rather than to retry.
func (g *Generator) lostErr(nd *node, tick int64) error {
	cause := ""
	var journal error
	if c := g.lost.Load(); c != nil {
		cause = " (" + (*c).Error() + ")"
		if errors.Is(*c, fence.ErrJournal) {
			journal = *c
		}
	}
	var err error
	switch {
	case nd == nil:
		err = fmt.Errorf("%w: no node value granted yet%s", fence.ErrLost, cause)
	case tick > nd.through.Load():
		err = fmt.Errorf("%w: node %s: the reservation ends at %s and no renewal has confirmed a new one: the lease store has not answered within the outage budget, or the lease's journal cannot be written%s; issuing resumes when they answer",
			fence.ErrLost, g.l.FormatNodeValues(nd.values), g.l.TickTime(nd.through.Load()+1).Format(time.RFC3339Nano), cause)
	case cause != "":
		err = fmt.Errorf("%w: node %s: the lease was lost%s; issuing resumes when a lease is held again", fence.ErrLost, g.l.FormatNodeValues(nd.values), cause)
	default:
		err = fmt.Errorf("%w: node %s: the lease was not renewed within the outage budget, so another process may hold the value; issuing resumes when it is renewed",
			fence.ErrLost, g.l.FormatNodeValues(nd.values))
	}
	if journal != nil {
		return &causedError{err: err, cause: journal}
	}
	return err
}

// causedError is a refusal that wraps its cause as well as ErrLost.
type causedError struct{ err, cause error }

func (e *causedError) Error() string   { return e.err.Error() }
func (e *causedError) Unwrap() []error { return []error{e.err, e.cause} }
