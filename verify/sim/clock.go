package sim

import (
	"context"
	"sort"
	"time"
)

// Node is a simulated machine: a clock with a rate error and a wall clock that can be
// stepped, goroutines that can be paused and killed, and the process's clock, which
// behaves as clock.System does: anchored on the oscillator when the process starts,
// following forward steps of the wall clock, never going back.
//
// A Node is the clock its process's code runs on: it implements clock.Clock,
// clock.Timeouter and sched.Spawner.
type Node struct {
	ID  int
	sim *Sim
	gs  map[*G]struct{}

	ppm     float64 // oscillator rate error
	start   int64   // true time the oscillator is referenced to
	wallOff int64   // wall clock = oscillator + wallOff

	pBase, pOsc, pAhead int64 // the process clock: pBase + (osc - pOsc) + pAhead

	pausedUntil int64 // true time; its goroutines do not run before it
	pauseOnRead int64 // pause this long right after the client's next clock read
	client      *G    // the goroutine that issues IDs
	lastRead    int64 // true time of the client's last clock read
	closing     bool
}

func newNode(s *Sim, id int, ppm float64, offset int64) *Node {
	n := &Node{ID: id, sim: s, gs: map[*G]struct{}{}, ppm: ppm, start: s.now, wallOff: offset}
	n.restartProcess()
	return n
}

func (n *Node) osc(t int64) int64 { return t + int64(float64(t-n.start)*n.ppm*1e-6) }

// Wall returns the node's wall clock at true time t.
func (n *Node) Wall(t int64) int64 { return n.osc(t) + n.wallOff }

// restartProcess anchors a new process's clock on the wall clock, as clock.NewSystem does.
func (n *Node) restartProcess() {
	t := n.sim.now
	n.pOsc = n.osc(t)
	n.pBase = n.pOsc + n.wallOff
	n.pAhead = 0
}

// at returns the process clock at true time t.
func (n *Node) at(t int64) int64 { return n.pBase + n.osc(t) - n.pOsc + n.pAhead }

// step moves the wall clock by d. The running process follows a forward step, as
// clock.System does within 50 ms; a backward step shows only in the next process.
func (n *Node) step(d int64) {
	n.wallOff += d
	if d > 0 {
		t := n.sim.now
		if lag := n.Wall(t) - n.at(t); lag > 0 {
			n.pAhead += lag
		}
	}
}

// trueAt returns the earliest true time at which the process clock reads t or more,
// if the clock is not stepped before.
func (n *Node) trueAt(t int64) int64 {
	now := n.sim.now
	d := t - n.at(now)
	if d <= 0 {
		return now
	}
	return now + int64(float64(d)/(1+n.ppm*1e-6)) + 1
}

// Now implements clock.Clock. A read by the node's client can be followed by a pause,
// as a garbage collection or a descheduling can stop a thread right after it read
// the clock.
func (n *Node) Now() int64 {
	s := n.sim
	v := n.at(s.now)
	if g := s.cur; g != nil && g == n.client && !n.closing {
		n.lastRead = s.now
		if d := n.pauseOnRead; d > 0 {
			n.pauseOnRead = 0
			n.pausedUntil = max(n.pausedUntil, s.now+d)
			s.park(context.Background(), s.now)
		}
	}
	return v
}

// SleepUntil implements clock.Clock on simulated time.
func (n *Node) SleepUntil(ctx context.Context, t int64) error {
	for {
		if n.at(n.sim.now) >= t {
			return nil
		}
		if err := n.sim.park(ctx, n.trueAt(t)); err != nil {
			return err
		}
	}
}

// WithTimeout implements clock.Timeouter: the deadline is d on this node's clock.
func (n *Node) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return n.sim.WithDeadline(parent, n.trueAt(n.at(n.sim.now)+int64(d)))
}

// Go implements sched.Spawner: the node's goroutines are the simulation's.
func (n *Node) Go(f func()) { n.sim.Go(n, f) }

// sortedGs returns the node's live goroutines by id, forgetting dead ones.
func (n *Node) sortedGs() []*G {
	n.sim.mu.Lock()
	defer n.sim.mu.Unlock()
	out := make([]*G, 0, len(n.gs))
	for g := range n.gs {
		if g.state == gDead {
			delete(n.gs, g)
			continue
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// storeClock is a store server's clock: an oscillator with a rate error, never
// stepped (an assumption of the protocol: a store's lease expiry must not jump).
type storeClock struct {
	sim   *Sim
	ppm   float64
	start int64
}

func (c *storeClock) at(t int64) int64 { return t + int64(float64(t-c.start)*c.ppm*1e-6) }

func (c *storeClock) Now() int64 { return c.at(c.sim.now) }

func (c *storeClock) SleepUntil(ctx context.Context, t int64) error {
	panic("sim: a store's clock is for reading")
}
