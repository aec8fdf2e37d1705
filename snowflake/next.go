package snowflake

import (
	"context"

	"github.com/flurryid/flurry"
)

// Next returns a new ID. With one lane, it is larger than every ID this generator
// returned before the call started. It blocks only to wait for a tick (at most one
// tick, or WaitThreshold for a clock step), and returns ctx.Err() if ctx ends first.
func (g *Generator) Next(ctx context.Context) (flurry.ID, error) {
	// Before a managed generator's first grant, active is none's lane, whose fence
	// is closed (limit 0).
	return g.nextOn(ctx, g.active.Load())
}

// NextN fills dst with new IDs, in increasing order, and returns how many it filled:
// len(dst) unless an error stopped it, which it then returns. IDs of one tick are
// reserved together, so a batch costs about one Next per tick it spans.
func (g *Generator) NextN(ctx context.Context, dst []flurry.ID) (int, error) {
	return g.nextN(ctx, 0, dst)
}

func (g *Generator) nextN(ctx context.Context, laneIdx int, dst []flurry.ID) (int, error) {
	filled := 0
	step := flurry.ID(1) << g.seqShift
	for filled < len(dst) {
		if err := ctx.Err(); err != nil {
			return filled, err
		}
		first, n, err := g.reserve(ctx, laneIdx, int64(len(dst)-filled))
		if err != nil {
			return filled, err
		}
		for i := int64(0); i < n; i++ {
			dst[filled] = first + flurry.ID(i)*step
			filled++
		}
	}
	return filled, nil
}

// reserve takes up to want consecutive sequence values in one tick of a lane and
// returns the first ID and how many it took.
//
// A lane's state is one 64-bit word: the tick and sequence value of the last ID
// taken from it. Every ID is taken by moving that word forward with one atomic
// operation (an add in the fast path, a compare-and-swap in reserveOn), so no two
// callers take the same value; and since the word only moves forward, a call that
// starts after another returned finds at least the other's value in the word and
// takes a larger one: with one lane, Next is linearizable. No lock is held while a
// caller waits: it sleeps between attempts, holding nothing.
func (g *Generator) reserve(ctx context.Context, laneIdx int, want int64) (flurry.ID, int64, error) {
	if want == 1 {
		id, err := g.next(ctx, laneIdx)
		if err != nil {
			return 0, 0, err
		}
		return id, 1, nil
	}
	return g.reserveSlow(ctx, laneIdx, want)
}

// next issues one ID from lane laneIdx: Next's steps for any lane.
func (g *Generator) next(ctx context.Context, laneIdx int) (flurry.ID, error) {
	return g.nextOn(ctx, g.active.Load().nd.lanes[laneIdx])
}

// nextOn issues one ID from lane ln, of the node that was active when the caller
// loaded it. Its first half is the fast path, for the common case of a lane whose
// last ID is in the clock's current tick with sequence values left: one clock read
// and one fetch-and-add, an add that never fails where a compare-and-swap fails and
// retries whenever another CPU got there first. An add that finds the tick used up
// lands in the guard bits above the sequence, issues nothing, and leaves the tick
// change to reserveOn, so the fast path never moves the state to another tick.
// Every other case goes to slowNext.
//
// The fast path is written for its cost per ID, which is what a caller pays beside
// the clock read. Next is inlined into its caller (its cost is the compiler's whole
// inlining budget: `go build -gcflags=-m ./snowflake` says whether it still is):
// it loads active, which is the active node's lane 0, and calls nextOn, so the
// calls are nextOn and the clock's Now (the system clock reads the runtime's
// monotonic clock directly). The lane's index, which only the slow path needs, is
// in the lane (ln.idx), not an argument; the clock call leaves no register intact,
// so what is live across it (g, ctx, ln, and nothing after it but d) is stored and
// loaded once. Each check below is a load and a compare, the fence and the
// serialisation are one word of the lane (lane.fast), and there is one atomic
// operation, where a mutex takes two. What the fast path does not check, it gets
// from elsewhere: Next on a closed generator must refuse, and Close ends every
// node's fence (node.end), which sends the call to slowNext, which looks at closed;
// the warning window (warnTick) needs no check because the fast path issues only in
// a tick that reserveOn has issued in, and reserveOn warns.
func (g *Generator) nextOn(ctx context.Context, ln *lane) (flurry.ID, error) {
	if ln.fast.Load() <= 0 {
		// The mutex or hybrid variant serialises the lane (the clock is read under
		// its mutex), or the fence has ended.
		if id := g.fastSerial(ln); id != 0 {
			return id, nil
		}
		return g.slowNext(ctx, ln)
	}
	// Through the interface: a direct call to the system clock behind a test of
	// which clock it is costs more instructions than the interface's call.
	nowNs := g.clk.Now()
	// One unsigned compare for a clock before the epoch (d wraps around to a huge
	// number) and for the fence: until and through (fenceLimit). ln.fast is loaded
	// again rather than kept across the clock read: as cheap, and fresher.
	d := nowNs - g.epochNs
	if uint64(d) >= uint64(ln.fast.Load()) {
		return g.slowNext(ctx, ln)
	}
	now := g.unit.DivShift(d) // fastSeq is 0 unless unit.Shifts
	old := ln.state.Load()
	// old is in tick now with sequence values left exactly when seq = old -
	// now<<stateShift, its sequence field, is below fastSeq (laneMask, or 0 without
	// the guard bits that the add needs): an earlier tick wraps around to a huge
	// number, a later one leaves at least 1<<stateShift. The fence's through, in
	// ln.fast, is at most maxTick, which keeps now<<stateShift from overflowing.
	// Every shift count is below 64 by construction; &63 says so to the compiler,
	// which otherwise adds a compare and a mask to each shift.
	seq := old - uint64(now)<<(g.stateShift&63)
	if seq >= g.fastSeq {
		return g.slowNext(ctx, ln)
	}
	if v := ln.state.Add(1); v != old+1 {
		// Another CPU's add landed between the load and this add.
		if id := g.fastContended(ln, old, v, d, now); id != 0 {
			return id, nil
		}
		return g.slowNext(ctx, ln)
	}
	// The add took old+1: the same tick, and sequence value seq+1, at most laneMask.
	if g.stateIsID {
		return flurry.ID(old+1) | flurry.ID(ln.idBits), nil // compose, written out
	}
	return g.compose(ln, now, int64(seq+1), old+1), nil
}

// fastContended finishes a fast-path add that found another CPU's add between its
// load and its add: the lane's cache line is moving between CPUs (the hybrid
// variant serialises the lane for a while), and the add issues only if it is still
// in the tick it loaded with a sequence value left. It returns 0 when it does not.
// d is the clock reading since the epoch: the fast path keeps d, not the reading,
// live in its registers.
func (g *Generator) fastContended(ln *lane, old, v uint64, d, now int64) flurry.ID {
	g.contended(ln, d+g.epochNs)
	stateShift := g.stateShift & 63
	seq := int64(v & g.stateSeq)
	if v>>stateShift != old>>stateShift || seq > g.laneMask {
		return 0
	}
	return g.compose(ln, now, seq, v)
}

// slowNext is Next on lane ln (of any node: the slow path loads the active node
// again) when the fast path did not issue. It is not inlined: the fast path pays
// for none of its instructions.
//
//go:noinline
func (g *Generator) slowNext(ctx context.Context, ln *lane) (flurry.ID, error) {
	id, _, err := g.reserveSlow(ctx, int(ln.idx), 1)
	return id, err
}

// compose builds the ID of sequence value seq of tick in lane ln; state is
// tick<<stateShift | seq.
func (g *Generator) compose(ln *lane, tick, seq int64, state uint64) flurry.ID {
	if g.stateIsID {
		return flurry.ID(state) | flurry.ID(ln.idBits)
	}
	// Every shift count is below 64 by construction; &63 says so to the compiler.
	return flurry.ID(tick<<(g.timeShift&63) | ln.idBits | seq<<(g.seqShift&63))
}
