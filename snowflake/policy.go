package snowflake

import (
	"context"
	"time"
)

// startSeq returns where the sequence of lane-local values starts in tick, given
// the last value used in the lane's previous tick.
func (g *Generator) startSeq(tick, prev int64) int64 {
	switch g.start {
	case StartRandom:
		// A hash of the tick instead of a random number generator: no shared state,
		// and every caller that races for the tick computes the same start.
		x := uint64(tick) ^ g.seed
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
		return int64(x % uint64(g.randBelow))
	case StartContinue:
		return (prev + 1) & g.laneMask
	}
	return 0
}

// plan chooses the tick and first sequence value of a lane's next ID after its last
// one (lastTick, lastSeq), with the clock at tick now and lastTick at most aheadTicks
// ahead of it. With wait set it chose not to issue yet: tick is then the tick the
// clock must reach first.
func (g *Generator) plan(lastTick, lastSeq, now int64) (tick, seq int64, wait bool) {
	if now > lastTick {
		// The clock has moved past the lane's last ID: start a new tick.
		return now, g.startSeq(now, lastSeq), false
	}
	if lastSeq < g.laneMask {
		// Values are left in the last tick (the clock's, or one within the allowed
		// lead ahead of it).
		return lastTick, lastSeq + 1, false
	}
	// The last tick is used up, so the next ID is in lastTick+1. allowed is how far
	// ahead of the clock that tick may start:
	//   - Borrow: aheadTicks (MaxDrift), as Borrow takes future ticks;
	//   - Logical with the lane already ahead of the clock (lastTick > now): the
	//     clock went back and Logical goes on from the last tick, through used-up
	//     ticks, up to aheadTicks ahead;
	//   - otherwise 0: under Wait an overflow waits for the clock, and so it does
	//     under Logical while the lane is at the clock's tick (nothing went back).
	next := lastTick + 1
	var allowed int64
	if g.overflow == Borrow || g.behind == Logical && lastTick > now {
		allowed = g.aheadTicks
	}
	if next-now > allowed {
		return next - allowed, 0, true
	}
	return next, g.startSeq(next, lastSeq), false
}

// noteDrift records how far ahead of the clock an ID was issued, and counts a tick
// taken ahead of the clock by Borrow. It is reached only when a tick is taken ahead
// or the clock was seen behind, so the fast path pays nothing.
func (g *Generator) noteDrift(tick int64, newTick bool, nowNs int64) {
	if newTick && g.overflow == Borrow {
		g.stats.borrowed.Add(1)
	}
	d := g.epochNs + tick*g.unitNs - nowNs
	if d <= 0 {
		return
	}
	for {
		m := g.stats.maxDrift.Load()
		if d <= m || g.stats.maxDrift.CompareAndSwap(m, d) {
			return
		}
	}
}

// clockBehind handles a clock standing behind the last issued tick of the active
// node by more than the allowed drift: wait for short gaps, else apply the policy.
// It returns nil when the caller should try again.
func (g *Generator) clockBehind(ctx context.Context, nd *node, lastTick, nowNs int64) error {
	gap := g.epochNs + (lastTick-g.aheadTicks)*g.unitNs - nowNs
	g.stats.behindEvents.Add(1)
	for {
		m := g.stats.maxBehind.Load()
		if gap <= m || g.stats.maxBehind.CompareAndSwap(m, gap) {
			break
		}
	}
	if g.waitNs >= 0 && gap <= g.waitNs {
		return g.sleepUntilTick(ctx, lastTick-g.aheadTicks)
	}
	if g.behind == SwitchNode {
		nowTick, _ := g.tickAt(nowNs)
		for _, cand := range g.nodes {
			if cand == nd || !cand.idleBefore(g, nowTick) {
				continue
			}
			if g.active.CompareAndSwap(nd.lane0, cand.lane0) {
				g.stats.switches.Add(1)
			}
			return nil // retry on whatever node is active now
		}
		if g.active.Load().nd != nd {
			return nil // another caller switched already
		}
	}
	g.stats.behindErrors.Add(1)
	return &ClockBehindError{Gap: time.Duration(g.epochNs + lastTick*g.unitNs - nowNs)}
}

// idleBefore reports whether every lane of n last issued before tick, so the node
// can take over at tick without running ahead of the clock.
func (n *node) idleBefore(g *Generator, tick int64) bool {
	for i := range n.lanes {
		if int64(n.lanes[i].state.Load()>>g.stateShift) >= tick {
			return false
		}
	}
	return true
}
