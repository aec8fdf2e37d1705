package snowflake

import (
	"context"
	"errors"

	"github.com/flurryid/flurry"
)

// errMoved tells reserve to start again from the active node: reserveOn slept off a
// clock step or moved to a standby node value. It never reaches a caller.
var errMoved = errors.New("snowflake: retry on the active node")

// reserveSlow is reserve without the fast path: a closed generator, a new tick, a
// full tick, a clock behind, a fence, or more than one ID.
func (g *Generator) reserveSlow(ctx context.Context, laneIdx int, want int64) (flurry.ID, int64, error) {
	if g.closed.Load() {
		return 0, 0, ErrClosed
	}
	for {
		nd := g.activeNode()
		if nd == nil {
			return 0, 0, g.lostErr(nil, 0)
		}
		id, n, err := g.reserveOn(ctx, nd, laneIdx, want)
		if err != errMoved {
			return id, n, err
		}
	}
}

// reserveOn is one attempt of reserve on node nd. It repeats these steps until its
// compare-and-swap succeeds or it must return:
//
//  1. Load the lane's state: the tick and sequence value of the lane's last ID.
//  2. Compare the last tick with the clock. It may be ahead of the clock by up to
//     aheadTicks (Borrow and Logical run ahead; under Wait and Fail aheadTicks is 0).
//     Further ahead means either a stale clock reading or a clock that went back:
//     read the clock again, and if it is still behind, apply the clock-behind policy.
//  3. Plan the next ID after the last: a new tick, the next value in the same tick,
//     or, when the tick is used up, the next tick or a sleep until the policy allows it.
//  4. Check the fence of a managed generator.
//  5. Commit: compare-and-swap the state from what step 1 loaded to the new ID. If
//     another caller moved it first, go back to step 1 with the same clock reading.
func (g *Generator) reserveOn(ctx context.Context, nd *node, laneIdx int, want int64) (flurry.ID, int64, error) {
	ln := nd.lanes[laneIdx]
	nowNs, now, err := g.readClock()
	if err != nil {
		return 0, 0, err
	}
	for {
		// Step 1: the lane's last ID.
		old := ln.state.Load()
		lastTick := int64(old >> g.stateShift)
		// A sequence field past laneMask holds fast-path adds that issued nothing
		// because the tick was used up: the tick is full.
		lastSeq := min(int64(old&g.stateSeq), g.laneMask)

		// Step 2. lastTick-now is how far the lane's last ID is ahead of the clock
		// (negative once the clock has moved past it).
		if lastTick-now > g.aheadTicks {
			// The reading was taken before the state was loaded. In between, another
			// caller may have read a later clock and issued in a later tick, or this
			// caller was descheduled: only a reading taken after the load can show a
			// clock that really went back.
			if nowNs, now, err = g.readClock(); err != nil {
				return 0, 0, err
			}
			if lastTick-now > g.aheadTicks {
				if err := g.clockBehind(ctx, nd, lastTick, nowNs); err != nil {
					return 0, 0, err
				}
				return 0, 0, errMoved // slept until the clock caught up, or switched node
			}
		}

		// Step 3.
		tick, seq, wait := g.plan(lastTick, lastSeq, now)
		if wait {
			// tick is the first tick in which the policy lets the next ID be issued.
			if err := g.sleepUntilTick(ctx, tick); err != nil {
				return 0, 0, err
			}
			g.stats.overflowWaits.Add(1)
			if nowNs, now, err = g.readClock(); err != nil {
				return 0, 0, err
			}
			continue
		}
		if tick > g.maxTick {
			return 0, 0, g.exhausted()
		}

		// Step 4. A managed generator issues nothing once its grant has run out on
		// the clock (until), nor in a tick past the reservation the store holds
		// (through): past either, another process may hold the node value.
		if nowNs >= nd.until.Load() || tick > nd.through.Load() {
			if g.closed.Load() {
				return 0, 0, ErrClosed // Close ended the fence
			}
			return 0, 0, g.lostErr(nd, tick)
		}

		// Step 5. n values seq..seq+n-1 of tick; the state records the last of them.
		n := min(want, g.laneMask-seq+1)
		if !ln.state.CompareAndSwap(old, uint64(tick)<<g.stateShift|uint64(seq+n-1)) {
			continue
		}
		if tick > now {
			g.noteDrift(tick, tick != lastTick, nowNs)
		}
		if tick >= g.warnTick && !g.warned.Load() {
			g.warn(tick)
		}
		return g.compose(ln, tick, seq, uint64(tick)<<g.stateShift|uint64(seq)), n, nil
	}
}

func (g *Generator) sleepUntilTick(ctx context.Context, tick int64) error {
	target := g.epochNs + tick*g.unitNs
	before := g.clk.Now()
	err := g.clk.SleepUntil(ctx, target)
	if slept := g.clk.Now() - before; slept > 0 {
		g.stats.waited.Add(slept)
	}
	return err
}
