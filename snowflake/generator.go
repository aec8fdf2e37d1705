package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/internal/fastdiv"
	"github.com/flurryid/flurry/internal/fence"
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
	// active is the node in use. Before a managed generator's first grant it is
	// none, a node whose fence never opens, so that next need not test for nil:
	// read it through activeNode.
	active atomic.Pointer[node]
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

// node is one node value (the primary or a standby) with one state per lane.
type node struct {
	values layout.NodeValues
	mask   int64
	lanes  []*lane
	lane0  *lane // lanes[0], for Next without a bounds check
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
	_           [32]byte
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

// setSerial sets whether callers of ln take its mutex, keeping the fence half.
func (ln *lane) setSerial(serial bool) {
	for {
		f := ln.fast.Load()
		if f < 0 == serial || ln.fast.CompareAndSwap(f, ^f) {
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

// newGenerator is New with contention variant c.
func newGenerator(opts Options, c contention) (*Generator, error) {
	l := opts.Layout
	if l == nil {
		l, _ = layout.Lookup("twitter")
	}
	codec := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
	g := &Generator{
		l:         l,
		codec:     codec,
		clk:       opts.Clock,
		epochNs:   l.Epoch().UnixNano(),
		unitNs:    int64(l.Unit()),
		unit:      fastdiv.New(int64(l.Unit())),
		maxTick:   codec.MaxTick(),
		timeShift: codec.TimeShift,
		seqShift:  codec.SeqShift,
		overflow:  opts.Overflow,
		behind:    opts.Behind,
		start:     opts.Start,
		onLifeLow: opts.OnLifeLow,
		seed:      rand.Uint64(),
	}
	if g.clk == nil {
		g.clk = clock.NewSystem()
	}
	if opts.Overflow > Borrow {
		return nil, fmt.Errorf("snowflake: unknown overflow policy %d", opts.Overflow)
	}
	if opts.Behind > SwitchNode {
		return nil, fmt.Errorf("snowflake: unknown clock-behind policy %d", opts.Behind)
	}
	if opts.Start > StartContinue {
		return nil, fmt.Errorf("snowflake: unknown sequence start %d", opts.Start)
	}
	lanes := opts.Lanes
	if lanes == 0 {
		lanes = 1
	}
	seqBits := codec.SeqBits
	g.contention = c
	if lanes < 0 || lanes&(lanes-1) != 0 || lanes > 1<<seqBits {
		return nil, fmt.Errorf("snowflake: Lanes %d must be a power of two from 1 to %d (2^%d sequence bits)", opts.Lanes, 1<<seqBits, seqBits)
	}
	g.laneBits = seqBits - uint(bits.TrailingZeros(uint(lanes)))
	g.laneMask = 1<<g.laneBits - 1
	g.stateShift = g.laneBits
	if guard := 63 - int(codec.TimeBits) - int(g.laneBits); guard > 0 {
		g.stateShift += uint(guard)
		g.fastAdd = 1<<g.stateShift-1<<g.laneBits >= 1<<16
	}
	if codec.SeqShift == 0 && g.fastAdd && 1<<codec.TimeShift-1<<g.laneBits >= 1<<16 {
		// The sequence is the ID's lowest field: put the state's tick where the ID's
		// time is (fewer guard bits, still enough), and a state word the fast path
		// moved to is its ID without the node and lane bits.
		g.stateShift = codec.TimeShift
		g.stateIsID = true
	}
	g.stateSeq = 1<<g.stateShift - 1
	if g.fastAdd && g.unit.Shifts() {
		// Units are whole milliseconds, so unit.Shifts fails only for a tick of 146
		// years or more.
		g.fastSeq = uint64(g.laneMask)
	}

	drift := opts.MaxDrift
	if drift < 0 {
		return nil, fmt.Errorf("snowflake: MaxDrift %v is negative", drift)
	}
	if drift > 0 && opts.Overflow != Borrow && opts.Behind != Logical {
		return nil, fmt.Errorf("snowflake: MaxDrift %v is set but only the Borrow and Logical policies use it; choose one or leave MaxDrift zero", drift)
	}
	if drift == 0 && (opts.Overflow == Borrow || opts.Behind == Logical) {
		drift = time.Second
	}
	if opts.Overflow == Borrow || opts.Behind == Logical {
		g.aheadTicks = int64(drift) / g.unitNs
		if g.aheadTicks < 1 {
			return nil, fmt.Errorf("snowflake: MaxDrift %v is shorter than one %v tick; the %s policy needs at least one", drift, l.Unit(), map[bool]string{true: "borrow", false: "logical"}[opts.Overflow == Borrow])
		}
	}
	switch {
	case opts.WaitThreshold < 0:
		g.waitNs = -1
	case opts.WaitThreshold == 0:
		g.waitNs = int64(10 * time.Millisecond)
	default:
		g.waitNs = int64(opts.WaitThreshold)
	}
	if opts.RandomBelow != 0 && opts.Start != StartRandom {
		return nil, fmt.Errorf("snowflake: RandomBelow %d is set but only StartRandom uses it; set Start: snowflake.StartRandom or leave RandomBelow zero", opts.RandomBelow)
	}
	if opts.Start == StartRandom {
		g.randBelow = int64(opts.RandomBelow)
		if g.randBelow == 0 {
			g.randBelow = 100
		}
		if g.randBelow < 0 {
			return nil, fmt.Errorf("snowflake: RandomBelow %d is negative", opts.RandomBelow)
		}
		g.randBelow = min(g.randBelow, (g.laneMask+1)/2)
		if g.randBelow < 1 {
			g.randBelow = 1
		}
	}
	if len(opts.Standby) > 0 && opts.Behind != SwitchNode {
		return nil, fmt.Errorf("snowflake: Standby node values are only used by the SwitchNode policy; set Behind: snowflake.SwitchNode or drop them")
	}
	if opts.Behind == SwitchNode && len(opts.Standby) == 0 {
		return nil, fmt.Errorf("snowflake: the SwitchNode policy needs at least one Standby node value")
	}
	g.managed, g.namespace = opts.Fence != nil, opts.Namespace
	if g.managed && (opts.Node != layout.NodeValues{} || len(opts.Standby) > 0) {
		return nil, fmt.Errorf("snowflake: a generator fed by a lease takes its node value from the lease; leave Options.Node and Standby zero (lease.Options.Node gives the fields that are not leased)")
	}
	g.lanesN = lanes

	for i, nv := range append([]layout.NodeValues{opts.Node}, opts.Standby...) {
		if g.managed {
			break
		}
		mask, err := codec.NodeMask(nv)
		if err != nil {
			if i > 0 {
				return nil, fmt.Errorf("snowflake: standby node value %d: %w", i, err)
			}
			return nil, fmt.Errorf("snowflake: %w", err)
		}
		for _, o := range g.nodes {
			if o.mask == mask {
				return nil, fmt.Errorf("snowflake: node value %s is listed twice", l.FormatNodeValues(nv))
			}
		}
		n := g.newNode(nv, mask)
		n.setFence(g, math.MaxInt64, g.maxTick)
		g.nodes = append(g.nodes, n)
	}
	if g.managed {
		g.none = g.newNode(layout.NodeValues{}, 0)
		g.active.Store(g.none)
	} else {
		g.active.Store(g.nodes[0])
	}

	now := g.clk.Now()
	tick, err := g.tickAt(now)
	if err != nil {
		return nil, err
	}
	if tick > g.maxTick {
		return nil, fmt.Errorf("%w: layout %s ran out on %s", ErrExhausted, l, l.Lifetime().Format(time.RFC3339))
	}
	g.warnTick = g.maxTick + 1
	if opts.WarnBefore >= 0 {
		warn := opts.WarnBefore
		if warn == 0 {
			warn = 365 * 24 * time.Hour
		}
		g.warnTick = max(0, g.maxTick+1-int64(warn)/g.unitNs)
	}

	if g.managed {
		if !fence.Attach(opts.Fence, target{g}) {
			return nil, fmt.Errorf("snowflake: Options.Fence is set by lease.NewGenerator, once per generator; leave it nil")
		}
		g.fenced = opts.Fence
	}

	registry.Lock()
	defer registry.Unlock()
	for i, n := range g.nodes {
		if registry.live[n.key] {
			for _, taken := range g.nodes[:i] {
				delete(registry.live, taken.key)
			}
			return nil, g.inUse(n.values)
		}
		registry.live[n.key] = true
	}
	if tick >= g.warnTick {
		g.warn(tick)
	}
	return g, nil
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
	if nd := g.active.Load(); nd != g.none {
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

func (g *Generator) tickAt(ns int64) (int64, error) {
	d := ns - g.epochNs
	if d < 0 {
		return 0, fmt.Errorf("%w: the clock reads %s, before %s", ErrBeforeEpoch, time.Unix(0, ns).UTC().Format(time.RFC3339Nano), g.l.Epoch().Format(time.RFC3339Nano))
	}
	return g.unit.Div(d), nil
}

// Next returns a new ID. With one lane, it is larger than every ID this generator
// returned before the call started. It blocks only to wait for a tick (at most one
// tick, or WaitThreshold for a clock step), and returns ctx.Err() if ctx ends first.
func (g *Generator) Next(ctx context.Context) (flurry.ID, error) {
	return g.next(ctx, 0)
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

// errMoved tells reserve to start again from the active node: reserveOn slept off a
// clock step or moved to a standby node value. It never reaches a caller.
var errMoved = errors.New("snowflake: retry on the active node")

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

// next issues one ID from lane laneIdx. Its first half is the fast path, for the
// common case of a lane whose last ID is in the clock's current tick with sequence
// values left: one clock read and one fetch-and-add, an add that never fails where
// a compare-and-swap fails and retries whenever another CPU got there first. An
// add that finds the tick used up lands in the guard bits above the sequence,
// issues nothing, and leaves the tick change to reserveOn, so the fast path never
// moves the state to another tick. Every other case goes to slowNext.
//
// The fast path is written for its cost per ID, which is what a caller pays beside
// the clock read: Next is inlined into its caller, so the calls are next, the
// system clock's Now (a direct call: sys saves the interface's), and time.Since
// inside it; each check below is a load and a compare; and there is one atomic
// operation, where a mutex takes two. What the fast path does not check, it gets
// from elsewhere: Next on a closed generator must refuse, and Close ends every
// node's fence (until), which sends the call to slowNext, which looks at closed;
// the warning window (warnTick) needs no check because the fast path issues only
// in a tick that reserveOn has issued in, and reserveOn warns.
func (g *Generator) next(ctx context.Context, laneIdx int) (flurry.ID, error) {
	// Before a managed generator's first grant, active is none, whose fence is
	// closed (limit 0).
	nd := g.active.Load()
	ln := nd.lane0
	if laneIdx != 0 {
		ln = nd.lanes[laneIdx] // Lane.Next
	}
	if ln.fast.Load() <= 0 {
		// The mutex or hybrid variant serialises the lane (the clock is read under
		// its mutex), or the fence has ended.
		if id, ok := g.fastSerial(ln); ok {
			return id, nil
		}
		return g.slowNext(ctx, laneIdx)
	}
	// Through the interface: a direct call to the system clock behind a test of
	// which clock it is costs more instructions than the interface's call.
	nowNs := g.clk.Now()
	// One unsigned compare for a clock before the epoch (d wraps around to a huge
	// number) and for the fence: until and through (fenceLimit). ln.fast is loaded
	// again rather than kept across the clock read: as cheap, and fresher.
	d := nowNs - g.epochNs
	if uint64(d) >= uint64(ln.fast.Load()) {
		return g.slowNext(ctx, laneIdx)
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
		return g.slowNext(ctx, laneIdx)
	}
	if v := ln.state.Add(1); v != old+1 {
		// Another CPU's add landed between the load and this add.
		return g.fastContended(ctx, ln, laneIdx, old, v, nowNs, now)
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
// in the tick it loaded with a sequence value left.
func (g *Generator) fastContended(ctx context.Context, ln *lane, laneIdx int, old, v uint64, nowNs, now int64) (flurry.ID, error) {
	g.contended(ln, nowNs)
	stateShift := g.stateShift & 63
	seq := int64(v & g.stateSeq)
	if v>>stateShift != old>>stateShift || seq > g.laneMask {
		return g.slowNext(ctx, laneIdx)
	}
	return g.compose(ln, now, seq, v), nil
}

// slowNext is next when the fast path did not issue.
func (g *Generator) slowNext(ctx context.Context, laneIdx int) (flurry.ID, error) {
	id, _, err := g.reserveSlow(ctx, laneIdx, 1)
	return id, err
}

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

// readClock reads the clock, in nanoseconds and in ticks.
func (g *Generator) readClock() (ns, tick int64, err error) {
	ns = g.clk.Now()
	tick, err = g.tickAt(ns)
	return ns, tick, err
}

func (g *Generator) exhausted() error {
	return fmt.Errorf("%w: layout %s ran out on %s", ErrExhausted, g.l, g.l.Lifetime().Format(time.RFC3339))
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

// fastSerial is the fast path under a lane's mutex: always under the mutex
// variant, and for hybridHold after the hybrid saw callers on two CPUs. next calls
// it when ln.fast is not a positive limit: serialised (negative), or a fence that
// has ended (0, which goes straight to the slow path). The clock is read inside the
// lock, so a caller keeps the lock, and the lane's cache line, for runs of calls
// while the others wait, as bwmarrin's generator does. Only the clock read and the
// add are inside: what follows them needs no lock, and every instruction inside is
// one the callers waiting for the lock wait for.
func (g *Generator) fastSerial(ln *lane) (flurry.ID, bool) {
	if ln.fast.Load() >= 0 {
		return 0, false // not serialised: the fence has ended
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
		return 0, false // no add (a state word after an add is never 0)
	}
	if v != old+1 {
		g.contended(ln, nowNs)
	}
	stateShift := g.stateShift & 63
	if seq := int64(v & g.stateSeq); v>>stateShift == old>>stateShift && seq <= g.laneMask {
		return g.compose(ln, now, seq, v), true
	}
	return 0, false
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

// newNode makes the node of node value nv, whose field bits are mask.
func (g *Generator) newNode(nv layout.NodeValues, mask int64) *node {
	n := &node{values: nv, mask: mask, lanes: g.newLanes(mask), key: g.regKey(mask)}
	n.lane0 = n.lanes[0]
	return n
}

// newLanes makes the lanes of the node with mask; their fence is 0 (nothing
// issues) until setFence. Under the mutex variant they are serialised for good.
func (g *Generator) newLanes(mask int64) []*lane {
	lanes := make([]*lane, g.lanesN)
	for i := range lanes {
		lanes[i] = new(lane)
		// Lanes split the sequence field, lane 0 lowest.
		lanes[i].idBits = mask | int64(i)<<g.laneBits<<g.seqShift
		if g.contention == contendMutex {
			lanes[i].setSerial(true)
		}
	}
	return lanes
}

// hybridHold is how long the hybrid variant serialises callers after it saw two
// CPUs add to a lane at once.
const hybridHold = int64(time.Millisecond)

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

func (g *Generator) sleepUntilTick(ctx context.Context, tick int64) error {
	target := g.epochNs + tick*g.unitNs
	before := g.clk.Now()
	err := g.clk.SleepUntil(ctx, target)
	if slept := g.clk.Now() - before; slept > 0 {
		g.stats.waited.Add(slept)
	}
	return err
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
			if g.active.CompareAndSwap(nd, cand) {
				g.stats.switches.Add(1)
			}
			return nil // retry on whatever node is active now
		}
		if g.active.Load() != nd {
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

func (g *Generator) warn(tick int64) {
	if g.onLifeLow == nil || g.warned.Swap(true) {
		return
	}
	end := g.l.Lifetime()
	left := time.Duration(g.maxTick+1-tick) * time.Duration(g.unitNs)
	g.onLifeLow(left, end)
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

// String describes the generator for logs: layout, node and policies.
func (g *Generator) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "snowflake %s node %s overflow=%s behind=%s", g.l, g.l.FormatNodeValues(g.Node()), g.overflow, g.behind)
	return b.String()
}
