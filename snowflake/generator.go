package snowflake

import (
	"context"
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

	nodes  []*node
	active atomic.Pointer[node]

	managed   bool
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
	lanes  []lane
	// until (clock ns) and through (tick) fence a managed generator: it issues
	// nothing at or after until, and no tick after through. Unmanaged: no limit.
	until   atomic.Int64
	through atomic.Int64
	key     string // in the in-process registry
}

// lane holds the position of the last ID issued from it: tick << stateShift | sequence.
// It is padded to a cache line so lanes used from different CPUs do not share one.
type lane struct {
	state atomic.Uint64
	_     [56]byte
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
// (seed 004). It is the one piece of package-level state in flurry, and it must be:
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
	l := opts.Layout
	if l == nil {
		l, _ = layout.Lookup("twitter")
	}
	c := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
	g := &Generator{
		l:         l,
		codec:     c,
		clk:       opts.Clock,
		epochNs:   l.Epoch().UnixNano(),
		unitNs:    int64(l.Unit()),
		maxTick:   c.MaxTick(),
		timeShift: c.TimeShift,
		seqShift:  c.SeqShift,
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
	seqBits := c.SeqBits
	if lanes < 0 || lanes&(lanes-1) != 0 || lanes > 1<<seqBits {
		return nil, fmt.Errorf("snowflake: Lanes %d must be a power of two from 1 to %d (2^%d sequence bits)", opts.Lanes, 1<<seqBits, seqBits)
	}
	g.laneBits = seqBits - uint(bits.TrailingZeros(uint(lanes)))
	g.laneMask = 1<<g.laneBits - 1
	g.stateShift = g.laneBits
	if guard := 63 - int(c.TimeBits) - int(g.laneBits); guard > 0 {
		g.stateShift += uint(guard)
		g.fastAdd = 1<<g.stateShift-1<<g.laneBits >= 1<<16
	}
	g.stateSeq = 1<<g.stateShift - 1

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
	g.managed, g.namespace = opts.Managed, opts.Namespace
	if g.managed && (opts.Node != layout.NodeValues{} || len(opts.Standby) > 0) {
		return nil, fmt.Errorf("snowflake: a Managed generator takes its node value from Grant; leave Node and Standby zero")
	}
	g.lanesN = lanes

	for i, nv := range append([]layout.NodeValues{opts.Node}, opts.Standby...) {
		if g.managed {
			break
		}
		mask, err := c.NodeMask(nv)
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
		n := &node{values: nv, mask: mask, lanes: make([]lane, lanes), key: g.regKey(mask)}
		n.until.Store(math.MaxInt64)
		n.through.Store(g.maxTick)
		g.nodes = append(g.nodes, n)
	}
	if !g.managed {
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
	registry.Lock()
	defer registry.Unlock()
	if g.managed {
		// Only the active value is registered: a value moved away from was released
		// then, and may now belong to another generator.
		if cur := g.active.Load(); cur != nil {
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

// Layout returns the generator's layout.
func (g *Generator) Layout() *layout.Layout { return g.l }

// Node returns the node value in use: the primary, or a standby after a switch.
// A Managed generator without a grant returns zero values.
func (g *Generator) Node() layout.NodeValues {
	if nd := g.active.Load(); nd != nil {
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
	return d / g.unitNs, nil
}

// Next returns a new ID. With one lane, it is larger than every ID this generator
// returned before the call started. It blocks only to wait for a tick (at most one
// tick, or WaitThreshold for a clock step), and returns ctx.Err() if ctx ends first.
func (g *Generator) Next(ctx context.Context) (flurry.ID, error) {
	id, _, err := g.reserve(ctx, 0, 1)
	return id, err
}

// NextN fills dst with new IDs, in increasing order, and returns how many it filled:
// len(dst) unless an error stopped it, which it then returns. IDs of one tick are
// reserved together, so a batch costs about one Next per tick it spans.
func (g *Generator) NextN(ctx context.Context, dst []flurry.ID) (int, error) {
	return g.nextN(ctx, 0, dst)
}

func (g *Generator) nextN(ctx context.Context, laneIdx int, dst []flurry.ID) (int, error) {
	filled := 0
	for filled < len(dst) {
		if err := ctx.Err(); err != nil {
			return filled, err
		}
		first, n, err := g.reserve(ctx, laneIdx, int64(len(dst)-filled))
		if err != nil {
			return filled, err
		}
		step := flurry.ID(1) << g.seqShift
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

// reserve takes up to want consecutive sequence values in one tick of a lane and
// returns the first ID and how many it took. It is a compare-and-swap loop on the
// lane's state; it never holds a lock, and sleeps only outside the loop's state.
func (g *Generator) reserve(ctx context.Context, laneIdx int, want int64) (flurry.ID, int64, error) {
	if g.closed.Load() {
		return 0, 0, ErrClosed
	}
	if want == 1 && g.fastAdd {
		if id, ok := g.fast(laneIdx); ok {
			return id, 1, nil
		}
	}
retry:
	nd := g.active.Load()
	if nd == nil {
		return 0, 0, g.lostErr(nil, 0)
	}
	ln := &nd.lanes[laneIdx]
	nowNs := g.clk.Now()
	now, err := g.tickAt(nowNs)
	if err != nil {
		return 0, 0, err
	}
	for {
		old := ln.state.Load()
		fresh := false // whether nowNs was read after old was loaded
	decide:
		oldTick := int64(old >> g.stateShift)
		oldSeq := min(int64(old&g.stateSeq), g.laneMask) // past laneMask: overflowing adds
		var tick, seq int64
		switch {
		case now > oldTick:
			tick, seq = now, g.startSeq(now, oldSeq)
			if tick > g.maxTick {
				return 0, 0, fmt.Errorf("%w: layout %s ran out on %s", ErrExhausted, g.l, g.l.Lifetime().Format(time.RFC3339))
			}
		default:
			behind := oldTick - now
			if behind > g.aheadTicks && !fresh {
				// The reading may be older than the state: another caller read the
				// clock later and issued in a newer tick, or this caller was
				// descheduled. Only a reading taken after loading the state can show
				// a clock that really went back.
				fresh = true
				nowNs = g.clk.Now()
				if now, err = g.tickAt(nowNs); err != nil {
					return 0, 0, err
				}
				goto decide
			}
			if behind > g.aheadTicks {
				if err := g.clockBehind(ctx, nd, oldTick, nowNs); err != nil {
					return 0, 0, err
				}
				goto retry
			}
			if oldSeq < g.laneMask {
				tick, seq = oldTick, oldSeq+1
				break
			}
			// The tick is used up: go to the next one if the policy lets the IDs run
			// that far ahead of the clock, else sleep until it may.
			tick = oldTick + 1
			var allowed int64 // Wait: not ahead of the clock
			if g.overflow == Borrow || g.behind == Logical && behind > 0 {
				allowed = g.aheadTicks
			}
			if tick-now > allowed {
				if err := g.sleepUntilTick(ctx, tick-allowed); err != nil {
					return 0, 0, err
				}
				g.stats.overflowWaits.Add(1)
				nowNs = g.clk.Now()
				if now, err = g.tickAt(nowNs); err != nil {
					return 0, 0, err
				}
				continue
			}
			if tick > g.maxTick {
				return 0, 0, fmt.Errorf("%w: layout %s ran out on %s", ErrExhausted, g.l, g.l.Lifetime().Format(time.RFC3339))
			}
			seq = g.startSeq(tick, oldSeq)
		}
		if nowNs >= nd.until.Load() || tick > nd.through.Load() {
			return 0, 0, g.lostErr(nd, tick)
		}
		n := min(want, g.laneMask-seq+1)
		if ln.state.CompareAndSwap(old, uint64(tick)<<g.stateShift|uint64(seq+n-1)) {
			if tick > now {
				g.noteDrift(tick, tick != oldTick, nowNs)
			}
			if tick >= g.warnTick && !g.warned.Load() {
				g.warn(tick)
			}
			full := seq | int64(laneIdx)<<g.laneBits
			return flurry.ID(tick<<g.timeShift | nd.mask | full<<g.seqShift), n, nil
		}
	}
}

// fast issues one ID by fetch-and-add when the lane's last ID is in the clock's
// current tick with sequence values left: one atomic add that never fails, where a
// compare-and-swap fails and retries whenever another CPU got there first. An add
// that finds the tick used up lands in the guard bits above the sequence, issues
// nothing, and leaves the tick change to the compare-and-swap path, so the fast path
// never moves the state to another tick. It reports false when it issued nothing.
func (g *Generator) fast(laneIdx int) (flurry.ID, bool) {
	nd := g.active.Load()
	if nd == nil {
		return 0, false
	}
	nowNs := g.clk.Now()
	if nowNs < g.epochNs || nowNs >= nd.until.Load() {
		return 0, false
	}
	now := (nowNs - g.epochNs) / g.unitNs
	ln := &nd.lanes[laneIdx]
	old := ln.state.Load()
	if int64(old>>g.stateShift) != now || int64(old&g.stateSeq) >= g.laneMask || now >= g.warnTick || now > nd.through.Load() {
		return 0, false
	}
	v := ln.state.Add(1)
	seq := int64(v & g.stateSeq)
	if v>>g.stateShift != old>>g.stateShift || seq > g.laneMask {
		return 0, false
	}
	full := seq | int64(laneIdx)<<g.laneBits
	return flurry.ID(now<<g.timeShift | nd.mask | full<<g.seqShift), true
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
// one per goroutine, with at most L goroutines; Generator.Next uses lane 0.
func (g *Generator) Lane() *Lane {
	n := len(g.nodes[0].lanes)
	return &Lane{g: g, idx: int(g.lanes.Add(1)-1) % n}
}

// Next returns a new ID from the lane: larger than every ID the lane returned before.
func (l *Lane) Next(ctx context.Context) (flurry.ID, error) {
	id, _, err := l.g.reserve(ctx, l.idx, 1)
	return id, err
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
