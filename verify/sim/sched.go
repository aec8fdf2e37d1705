// Package sim is a deterministic simulation, in the manner of FoundationDB's, of
// flurry's lease protocol and segment allocator running the real code: lease.Session,
// snowflake.Generator and segment.Allocator, on thousands of simulated nodes, with
// in-memory stores wrapped by a fault injector.
//
// The simulation owns all time. Its goroutines run one at a time: a goroutine runs
// until it blocks on the simulation (a clock's SleepUntil, a deadline of a clock's
// WithTimeout, a store call's latency), then hands the baton back to the scheduler,
// which moves simulated time to the next event and hands the baton on. Every choice
// comes from one seeded random source, so one seed is one history: the trace hash of
// a run is the same every time.
package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Sim is the scheduler: simulated time, the event queue and the baton.
type Sim struct {
	now  int64 // true simulated time, ns since the Unix epoch
	seq  uint64
	q    eventQueue
	rng  *rand.Rand
	back chan struct{} // a goroutine hands the baton back to the scheduler
	cur  *G            // the goroutine holding the baton; nil: the scheduler
	gids int64

	mu sync.Mutex // guards G.state against a goroutine woken by a cancelled context

	trace  uint64 // running FNV-1a hash of the history
	Events int64  // events run
}

// G is a goroutine of the simulation.
type G struct {
	id    int64
	wake  chan struct{}
	state gState
	gen   uint64
	kill  bool
	owner *Node // the node whose goroutine it is; nil for the simulation's own
}

type gState uint8

const (
	gParked   gState = iota // waiting for an event
	gWaking                 // its context was cancelled by the scheduler; a wake is queued
	gRunning                // holds the baton
	gBorrowed               // woken by a context another goroutine cancelled; runs in that goroutine's turn
	gDead
)

type event struct {
	t   int64
	seq uint64
	g   *G // wake g (when gen matches) ...
	gen uint64
	fn  func() // ... or run fn on the scheduler; fn must not block
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// New returns a simulation at start (ns since the Unix epoch) seeded with seed.
func New(seed uint64, start int64) *Sim {
	return &Sim{now: start, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), back: make(chan struct{}), trace: 14695981039346656037}
}

// Now returns the true simulated time.
func (s *Sim) Now() int64 { return s.now }

// Rand returns the simulation's random source. Only the baton holder may use it.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// Trace mixes values into the history's hash.
func (s *Sim) Trace(vs ...int64) {
	h := s.trace
	for _, v := range vs {
		for i := 0; i < 8; i++ {
			h ^= uint64(byte(v >> (8 * i)))
			h *= 1099511628211
		}
	}
	s.trace = h
}

// TraceHash returns the hash of the history so far.
func (s *Sim) TraceHash() uint64 { return s.trace }

// At runs fn on the scheduler at true time t (or now, if t has passed). fn must not
// block; it may start goroutines and queue events.
func (s *Sim) At(t int64, fn func()) {
	s.seq++
	heap.Push(&s.q, event{t: max(t, s.now), seq: s.seq, fn: fn})
}

func (s *Sim) wakeAt(t int64, g *G) {
	s.seq++
	heap.Push(&s.q, event{t: max(t, s.now), seq: s.seq, g: g, gen: g.gen})
}

// Go starts f as a goroutine of node (nil: of the simulation) that first runs at the
// current time, after the goroutines and events already due.
func (s *Sim) Go(node *Node, f func()) *G {
	s.gids++
	g := &G{id: s.gids, wake: make(chan struct{}, 1), owner: node}
	if node != nil {
		s.mu.Lock()
		node.gs[g] = struct{}{}
		s.mu.Unlock()
	}
	s.wakeAt(s.now, g)
	go func() {
		<-g.wake
		defer s.exited(g)
		if g.kill {
			return
		}
		f()
	}()
	return g
}

// exited hands the baton back when a goroutine ends (returns or is killed).
func (s *Sim) exited(g *G) {
	s.mu.Lock()
	borrowed := g.state == gBorrowed
	g.state = gDead
	s.mu.Unlock()
	if borrowed {
		return // it ran in another goroutine's turn; that one still holds the baton
	}
	s.cur = nil
	s.back <- struct{}{}
}

// Current returns the goroutine holding the baton, or nil.
func (s *Sim) Current() *G { return s.cur }

// park blocks the running goroutine until true time t, or until ctx is done. It
// returns ctx.Err() when ctx ended the wait. A killed goroutine does not return.
func (s *Sim) park(ctx context.Context, t int64) error {
	var done <-chan struct{}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		done = ctx.Done()
	}
	g := s.cur
	if g == nil {
		panic("sim: a goroutine the simulation did not start blocked on it; start it with Sim.Go or through the clock")
	}
	s.mu.Lock()
	g.gen++
	g.state = gParked
	s.mu.Unlock()
	s.wakeAt(t, g)
	if sc := simCtxOf(ctx); sc != nil {
		sc.waiters = append(sc.waiters, waiter{g, g.gen})
	}
	s.cur = nil
	s.back <- struct{}{}
	select {
	case <-g.wake:
	case <-done:
		s.mu.Lock()
		if g.state == gParked {
			// Cancelled by the goroutine running now (a Close), which waits for this
			// one: run in its turn, to the end or to another wait on a done context.
			g.state = gBorrowed
			s.mu.Unlock()
			return ctx.Err()
		}
		s.mu.Unlock()
		<-g.wake
	}
	if g.kill {
		runtime.Goexit()
	}
	if ctx != nil {
		return ctx.Err()
	}
	return nil
}

// Kill ends every goroutine of node at once, as a crash does: each wakes only to
// exit, running its deferred calls. Call it from an event.
func (s *Sim) Kill(node *Node) {
	for _, g := range node.sortedGs() {
		g.kill = true
		s.mu.Lock()
		if g.state == gParked || g.state == gWaking {
			g.state = gWaking
			g.gen++
			s.wakeAt(s.now, g)
		}
		s.mu.Unlock()
	}
}

// Run runs events until none is left or the next is after until (true time).
func (s *Sim) Run(until int64) {
	for s.q.Len() > 0 {
		if s.q[0].t > until {
			break
		}
		e := heap.Pop(&s.q).(event)
		if e.g != nil {
			g := e.g
			s.mu.Lock()
			ok := e.gen == g.gen && (g.state == gParked || g.state == gWaking)
			if ok && g.owner != nil && g.owner.pausedUntil > e.t && !g.kill {
				s.mu.Unlock()
				s.wakeAt(g.owner.pausedUntil, g) // the node is paused: later
				continue
			}
			if ok {
				g.state = gRunning
			}
			s.mu.Unlock()
			if !ok {
				continue
			}
			s.now = e.t
			s.Events++
			s.Trace(e.t, g.id)
			s.cur = g
			g.wake <- struct{}{}
			<-s.back
			continue
		}
		s.now = e.t
		s.Events++
		e.fn()
	}
	s.now = max(s.now, until)
}

// simCtx is a context whose deadline the simulation measures.
type simCtx struct {
	context.Context
	cancel      func() // cancels with the deadline as cause
	plainCancel func()
	s           *Sim
	parent      *simCtx
	children    []*simCtx
	waiters     []waiter
	ended       bool
}

// errDeadline is the cause a simCtx is cancelled with when its deadline passes.
var errDeadline = context.DeadlineExceeded

type waiter struct {
	g   *G
	gen uint64
}

type simCtxKey struct{}

func (c *simCtx) Value(k any) any {
	if k == (simCtxKey{}) {
		return c
	}
	return c.Context.Value(k)
}

func simCtxOf(ctx context.Context) *simCtx {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(simCtxKey{}).(*simCtx)
	return c
}

// WithDeadline returns a copy of parent that the scheduler cancels at true time t.
func (s *Sim) WithDeadline(parent context.Context, t int64) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancelCause(parent)
	c := &simCtx{Context: inner, cancel: func() { cancel(errDeadline) }, plainCancel: func() { cancel(nil) }, s: s, parent: simCtxOf(parent)}
	if c.parent != nil {
		c.parent.children = append(c.parent.children, c)
	}
	s.At(t, func() { c.end(true) })
	return c, func() { c.end(false) }
}

// Err reports context.DeadlineExceeded once the deadline passed, as a context with a
// real deadline does.
func (c *simCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == errDeadline {
		return context.DeadlineExceeded
	}
	return err
}

// end cancels c on the baton holder's turn: goroutines parked on it or on its
// descendants are queued to wake now, in a fixed order, rather than woken by the
// cancellation itself.
func (c *simCtx) end(deadline bool) {
	if c.ended {
		return
	}
	var ws []waiter
	var walk func(x *simCtx)
	walk = func(x *simCtx) {
		ws = append(ws, x.waiters...)
		x.waiters = nil
		for _, ch := range x.children {
			walk(ch)
		}
	}
	walk(c)
	s := c.s
	s.mu.Lock()
	for _, w := range ws {
		if w.g.gen == w.gen && w.g.state == gParked {
			w.g.state = gWaking
			w.g.gen++
			s.wakeAt(s.now, w.g)
		}
	}
	s.mu.Unlock()
	c.ended = true
	if deadline {
		c.cancel()
	} else {
		c.plainCancel()
	}
	if c.parent != nil {
		for i, ch := range c.parent.children {
			if ch == c {
				c.parent.children = append(c.parent.children[:i], c.parent.children[i+1:]...)
				break
			}
		}
	}
}

// errTimeout is returned by a store call whose reply never came, after the driver's
// own timeout.
var errTimeout = fmt.Errorf("sim: request timed out (reply lost)")
