package snowflake

import (
	"time"

	"github.com/flurryid/flurry"
)

// contention names how a lane serves callers on several CPUs at once. The variants
// issue the same IDs under the same guarantees; they differ in what moves between
// CPUs. Only tests and benchmarks choose one (newGenerator).
type contention uint8

const (
	// contendAdd: the fast path is a fetch-and-add on the lane's word; with callers on
	// two CPUs the word's cache line moves between them on every ID.
	contendAdd contention = iota
	// contendMutex: the fast path, clock read included, runs under the lane's mutex.
	contendMutex
	// contendHybrid: fetch-and-add while one CPU uses the lane; the mutex for a while
	// after an add shows another CPU's add in between.
	contendHybrid
)

// defaultContention is the variant New uses.
const defaultContention = contendHybrid

// hybridHold is how long the hybrid variant serialises callers after it saw two
// CPUs add to a lane at once.
const hybridHold = int64(time.Millisecond)

// fastSerial is the fast path under a lane's mutex: always under the mutex
// variant, and for hybridHold after the hybrid saw callers on two CPUs. next calls
// it when ln.fast is not a positive limit: serialised (negative), or a fence that
// has ended (0, which goes straight to the slow path). It returns 0 when it does
// not issue, as fast does. The clock is read inside the
// lock, so a caller keeps the lock, and the lane's cache line, for runs of calls
// while the others wait, as bwmarrin's generator does. Only the clock read and the
// add are inside: what follows them needs no lock, and every instruction inside is
// one the callers waiting for the lock wait for.
func (g *Generator) fastSerial(ln *lane) flurry.ID {
	if ln.fast.Load() >= 0 {
		return 0 // not serialised: the fence has ended
	}
	var nowNs, now int64
	var old, v uint64
	ln.mu.Lock()
	nowNs = g.clk.Now()
	// next's fast path, with the fence limit loaded again under the lock. The add
	// is still atomic: callers that loaded ln.fast before it was made serial add
	// without the mutex, and reserveOn moves the state to a new tick by
	// compare-and-swap.
	if d := nowNs - g.epochNs; uint64(d) < uint64(^ln.fast.Load()) {
		now = g.unit.DivShift(d)
		old = ln.state.Load()
		if old-uint64(now)<<(g.stateShift&63) < g.fastSeq {
			v = ln.state.Add(1)
		}
	}
	ln.mu.Unlock()
	if g.contention == contendHybrid {
		if until := ln.serialUntil.Load(); nowNs >= until || until-nowNs > hybridHold {
			ln.setSerial(false) // try lock-free again; a clock step back ends it too
		}
	}
	if v == 0 {
		return 0 // no add (a state word after an add is never 0)
	}
	if v != old+1 {
		g.contended(ln, nowNs)
	}
	stateShift := g.stateShift & 63
	if seq := int64(v & g.stateSeq); v>>stateShift == old>>stateShift && seq <= g.laneMask {
		return g.compose(ln, now, seq, v)
	}
	return 0
}

// contended is called when another CPU's add landed between a caller's load and
// add: the lane's cache line is moving between CPUs on every ID. The hybrid
// serialises callers for hybridHold, so that one keeps the line for runs of calls.
func (g *Generator) contended(ln *lane, nowNs int64) {
	if g.contention == contendHybrid {
		ln.serialUntil.Store(nowNs + hybridHold)
		ln.setSerial(true)
	}
}

// setSerial sets whether callers of ln take its mutex, keeping the fence half.
func (ln *lane) setSerial(serial bool) {
	for {
		f := ln.fast.Load()
		if f < 0 == serial || ln.fast.CompareAndSwap(f, ^f) {
			return
		}
	}
}
