package snowflake

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/internal/fastdiv"
	"github.com/flurryid/flurry/layout"
)

// Generator issues IDs for one layout and one node value. It is safe for concurrent
// use and does not allocate per ID.
type Generator struct {
	// Read-mostly configuration, shared by every caller.
	l         *layout.Layout
	codec     *bitcodec.Codec // l's field positions
	clk       clock.Clock
	epochNs   int64
	unitNs    int64
	unit      fastdiv.Divisor // unitNs, divided by without a hardware divide
	maxTick   int64
	timeShift uint
	seqShift  uint
	laneBits  uint  // sequence bits inside one lane
	laneMask  int64 // largest sequence value inside one lane
	// A lane's state is tick << stateShift | sequence. stateShift leaves guard bits
	// above the lane's sequence bits, so that fetch-and-add on a full tick runs into
	// the guard bits instead of the tick: see the fast path of reserve.
	stateShift uint
	stateSeq   uint64 // mask of the sequence and guard bits
	fastAdd    bool   // the guard bits hold at least 2^16 overflowing adds
	fastSeq    uint64 // laneMask with fastAdd and unit.Shifts, else 0: the fast path issues below it
	stateIsID  bool   // stateShift is timeShift and seqShift 0: an issued state | node | lane bits is the ID
	overflow   OverflowPolicy
	behind     BehindPolicy
	aheadTicks int64 // how many ticks ahead of the clock Borrow/Logical may issue
	waitNs     int64 // rollback absorbed by sleeping; -1: never
	start      SequenceStart
	randBelow  int64
	seed       uint64
	warnTick   int64 // first tick inside the warning window; maxTick+1 when disabled
	onLifeLow  func(time.Duration, time.Time)
	lanesN     int
	contention contention // how one lane serves concurrent callers

	nodes []*node
	// active is lane 0 of the node in use (its nd), so that Next loads one pointer
	// to reach its lane. Before a managed generator's first grant it is none's, a
	// node whose fence never opens, so that Next need not test for nil: read the
	// node through activeNode.
	active atomic.Pointer[lane]
	none   *node

	// *fenced is the Options.Fence of a managed generator (nil otherwise), embedded
	// under an unexported name: the field is not part of the API, and its promoted
	// method lets package lease find the generator's fence.Target (grant.go).
	*fenced
	managed   bool // Fence was set: the node value comes from grants
	namespace string
	grantMu   sync.Mutex // serialises Grant, Revoke and Close; never taken by Next
	lost      atomic.Pointer[error]
	closed    atomic.Bool
	warned    atomic.Bool
	lanes     atomic.Uint32 // lanes handed out by Lane

	stats stats
}

type stats struct {
	overflowWaits atomic.Int64
	waited        atomic.Int64
	borrowed      atomic.Int64
	behindEvents  atomic.Int64
	maxBehind     atomic.Int64
	behindErrors  atomic.Int64
	switches      atomic.Int64
	maxDrift      atomic.Int64
}

// Stats counts the slow paths a generator took. Only rare events are counted, so
// the fast path stays free of shared writes.
type Stats struct {
	// OverflowWaits counts sleeps because a tick's sequence ran out; Waited is their
	// total length plus rollback waits.
	OverflowWaits int64
	Waited        time.Duration
	// Borrowed counts ticks taken ahead of the clock by the Borrow policy, and
	// MaxDriftSeen is the furthest ahead of the clock an issued ID's tick has been.
	Borrowed     int64
	MaxDriftSeen time.Duration
	// ClockBehind counts times the clock was found behind the last issued tick by more
	// than the allowed drift, MaxBehind the largest such gap, BehindErrors the
	// ClockBehindErrors returned, and Switches the moves to a standby node value.
	ClockBehind  int64
	MaxBehind    time.Duration
	BehindErrors int64
	Switches     int64
	// Node is the node value in use now.
	Node layout.NodeValues
}

// registry is the in-process guard against two live generators for the same IDs
// (two instances of one node in one process issue the same IDs). It is the one piece of package-level state in flurry, and it must be:
// the duplicate it prevents comes from two callers in one process that do not know of
// each other.
var registry = struct {
	sync.Mutex
	live map[string]bool
}{live: map[string]bool{}}

// New returns a generator for opts. It fails when an option is out of range (the
// error names it), when a node value does not fit its field (layout.ErrInvalid),
// when the layout's time has run out (ErrExhausted) or when the clock is before the
// epoch (ErrBeforeEpoch), and when a live generator in this process already owns the
// same namespace, layout shape and node value (ErrInUse).
func New(opts Options) (*Generator, error) {
	return newGenerator(opts, defaultContention)
}

// Close releases the node values in the in-process guard. Later calls return
// ErrClosed. Close is idempotent.
func (g *Generator) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	g.grantMu.Lock()
	defer g.grantMu.Unlock()
	// The fast path does not look at closed: a fence ended at the beginning of time
	// sends every later call to the slow path, which does.
	for _, n := range g.nodes {
		n.end()
	}
	registry.Lock()
	defer registry.Unlock()
	if g.managed {
		// Only the active value is registered: a value moved away from was released
		// then, and may now belong to another generator.
		if cur := g.activeNode(); cur != nil {
			delete(registry.live, cur.key)
		}
		return nil
	}
	for _, n := range g.nodes {
		delete(registry.live, n.key)
	}
	return nil
}

func (g *Generator) regKey(mask int64) string {
	return g.namespace + "\x00" + g.codec.Shape() + "\x00" + strconv.FormatInt(mask, 10)
}

func (g *Generator) inUse(nv layout.NodeValues) error {
	return fmt.Errorf("%w: namespace %q, layout %s, node %s; share the first generator or Close it", ErrInUse, g.namespace, g.l, g.l.FormatNodeValues(nv))
}

// activeNode returns the node in use: nil before a managed generator's first grant.
func (g *Generator) activeNode() *node {
	if nd := g.active.Load().nd; nd != g.none {
		return nd
	}
	return nil
}

// Layout returns the generator's layout.
func (g *Generator) Layout() *layout.Layout { return g.l }

// Node returns the node value in use: the primary, or a standby after a switch.
// A generator fed by a lease (lease.NewGenerator) returns zero values before its
// first grant.
func (g *Generator) Node() layout.NodeValues {
	if nd := g.activeNode(); nd != nil {
		return nd.values
	}
	return layout.NodeValues{}
}

// Stats returns counters of the slow paths taken so far.
func (g *Generator) Stats() Stats {
	s := &g.stats
	return Stats{
		OverflowWaits: s.overflowWaits.Load(),
		Waited:        time.Duration(s.waited.Load()),
		Borrowed:      s.borrowed.Load(),
		MaxDriftSeen:  time.Duration(s.maxDrift.Load()),
		ClockBehind:   s.behindEvents.Load(),
		MaxBehind:     time.Duration(s.maxBehind.Load()),
		BehindErrors:  s.behindErrors.Load(),
		Switches:      s.switches.Load(),
		Node:          g.Node(),
	}
}

// String describes the generator for logs: layout, node and policies.
func (g *Generator) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "snowflake %s node %s overflow=%s behind=%s", g.l, g.l.FormatNodeValues(g.Node()), g.overflow, g.behind)
	return b.String()
}

func (g *Generator) tickAt(ns int64) (int64, error) {
	d := ns - g.epochNs
	if d < 0 {
		return 0, fmt.Errorf("%w: the clock reads %s, before %s", ErrBeforeEpoch, time.Unix(0, ns).UTC().Format(time.RFC3339Nano), g.l.Epoch().Format(time.RFC3339Nano))
	}
	return g.unit.Div(d), nil
}

// readClock reads the clock, in nanoseconds and in ticks.
func (g *Generator) readClock() (ns, tick int64, err error) {
	ns = g.clk.Now()
	tick, err = g.tickAt(ns)
	return ns, tick, err
}

func (g *Generator) exhausted() error {
	return fmt.Errorf("%w: layout %s ran out on %s", ErrExhausted, g.l, g.l.Lifetime().Format(time.RFC3339))
}

func (g *Generator) warn(tick int64) {
	if g.onLifeLow == nil || g.warned.Swap(true) {
		return
	}
	end := g.l.Lifetime()
	left := time.Duration(g.maxTick+1-tick) * time.Duration(g.unitNs)
	g.onLifeLow(left, end)
}
