package snowflake

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/internal/fastdiv"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

// newGenerator is New with contention variant c. Each step checks the options it
// reads, in the order of the Options fields, so that an error names the first
// field that is wrong.
func newGenerator(opts Options, c contention) (*Generator, error) {
	g := newBare(opts, c)
	for _, step := range []func(Options) error{g.checkPolicies, g.setLanes, g.setDrift, g.setStart, g.setNodes} {
		if err := step(opts); err != nil {
			return nil, err
		}
	}
	tick, err := g.startTick()
	if err != nil {
		return nil, err
	}
	g.setWarn(opts)
	if g.managed {
		if !fence.Attach(opts.Fence, target{g}) {
			return nil, fmt.Errorf("snowflake: Options.Fence is set by lease.NewGenerator, once per generator; leave it nil")
		}
		g.fenced = opts.Fence
	}
	if err := g.register(); err != nil {
		return nil, err
	}
	if tick >= g.warnTick {
		g.warn(tick)
	}
	return g, nil
}

// newBare returns a generator with the layout's geometry, the clock and the
// options that need no check.
func newBare(opts Options, c contention) *Generator {
	l := opts.Layout
	if l == nil {
		l, _ = layout.Lookup("twitter")
	}
	codec := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
	g := &Generator{
		l:          l,
		codec:      codec,
		clk:        opts.Clock,
		epochNs:    l.Epoch().UnixNano(),
		unitNs:     int64(l.Unit()),
		unit:       fastdiv.New(int64(l.Unit())),
		maxTick:    codec.MaxTick(),
		timeShift:  codec.TimeShift,
		seqShift:   codec.SeqShift,
		overflow:   opts.Overflow,
		behind:     opts.Behind,
		start:      opts.Start,
		onLifeLow:  opts.OnLifeLow,
		seed:       rand.Uint64(),
		contention: c,
		managed:    opts.Fence != nil,
		namespace:  opts.Namespace,
	}
	if g.clk == nil {
		g.clk = clock.NewSystem()
	}
	return g
}

// checkPolicies refuses a policy value that has no meaning.
func (g *Generator) checkPolicies(opts Options) error {
	if opts.Overflow > Borrow {
		return fmt.Errorf("snowflake: unknown overflow policy %d", opts.Overflow)
	}
	if opts.Behind > SwitchNode {
		return fmt.Errorf("snowflake: unknown clock-behind policy %d", opts.Behind)
	}
	if opts.Start > StartContinue {
		return fmt.Errorf("snowflake: unknown sequence start %d", opts.Start)
	}
	return nil
}

// setLanes splits the sequence field into Options.Lanes lanes and lays out a
// lane's state word (see lane), choosing whether the fast path can add to it.
func (g *Generator) setLanes(opts Options) error {
	codec := g.codec
	lanes := opts.Lanes
	if lanes == 0 {
		lanes = 1
	}
	seqBits := codec.SeqBits
	if lanes < 0 || lanes&(lanes-1) != 0 || lanes > 1<<seqBits {
		return fmt.Errorf("snowflake: Lanes %d must be a power of two from 1 to %d (2^%d sequence bits)", opts.Lanes, 1<<seqBits, seqBits)
	}
	g.lanesN = lanes
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
	return nil
}

// setDrift sets how far ahead of the clock Borrow and Logical may issue
// (MaxDrift) and how long a clock step back is slept off (WaitThreshold).
func (g *Generator) setDrift(opts Options) error {
	drift := opts.MaxDrift
	ahead := opts.Overflow == Borrow || opts.Behind == Logical
	if drift < 0 {
		return fmt.Errorf("snowflake: MaxDrift %v is negative", drift)
	}
	if drift > 0 && !ahead {
		return fmt.Errorf("snowflake: MaxDrift %v is set but only the Borrow and Logical policies use it; choose one or leave MaxDrift zero", drift)
	}
	if drift == 0 && ahead {
		drift = time.Second
	}
	if ahead {
		g.aheadTicks = int64(drift) / g.unitNs
		if g.aheadTicks < 1 {
			return fmt.Errorf("snowflake: MaxDrift %v is shorter than one %v tick; the %s policy needs at least one", drift, g.l.Unit(), map[bool]string{true: "borrow", false: "logical"}[opts.Overflow == Borrow])
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
	return nil
}

// setStart sets where a tick's sequence starts (Start, RandomBelow).
func (g *Generator) setStart(opts Options) error {
	if opts.RandomBelow != 0 && opts.Start != StartRandom {
		return fmt.Errorf("snowflake: RandomBelow %d is set but only StartRandom uses it; set Start: snowflake.StartRandom or leave RandomBelow zero", opts.RandomBelow)
	}
	if opts.Start != StartRandom {
		return nil
	}
	g.randBelow = int64(opts.RandomBelow)
	if g.randBelow == 0 {
		g.randBelow = 100
	}
	if g.randBelow < 0 {
		return fmt.Errorf("snowflake: RandomBelow %d is negative", opts.RandomBelow)
	}
	g.randBelow = max(min(g.randBelow, (g.laneMask+1)/2), 1)
	return nil
}

// setNodes makes the nodes of the primary and standby node values, or, for a
// generator fed by a lease, the closed node that stands in until the first grant.
func (g *Generator) setNodes(opts Options) error {
	if len(opts.Standby) > 0 && opts.Behind != SwitchNode {
		return fmt.Errorf("snowflake: Standby node values are only used by the SwitchNode policy; set Behind: snowflake.SwitchNode or drop them")
	}
	if opts.Behind == SwitchNode && len(opts.Standby) == 0 {
		return fmt.Errorf("snowflake: the SwitchNode policy needs at least one Standby node value")
	}
	if g.managed {
		if opts.Node != (layout.NodeValues{}) || len(opts.Standby) > 0 {
			return fmt.Errorf("snowflake: a generator fed by a lease takes its node value from the lease; leave Options.Node and Standby zero (lease.Options.Node gives the fields that are not leased)")
		}
		g.none = g.newNode(layout.NodeValues{}, 0)
		g.active.Store(g.none.lane0)
		return nil
	}
	for i, nv := range append([]layout.NodeValues{opts.Node}, opts.Standby...) {
		mask, err := g.codec.NodeMask(nv)
		if err != nil {
			if i > 0 {
				return fmt.Errorf("snowflake: standby node value %d: %w", i, err)
			}
			return fmt.Errorf("snowflake: %w", err)
		}
		for _, o := range g.nodes {
			if o.mask == mask {
				return fmt.Errorf("snowflake: node value %s is listed twice", g.l.FormatNodeValues(nv))
			}
		}
		n := g.newNode(nv, mask)
		n.setFence(g, math.MaxInt64, g.maxTick)
		g.nodes = append(g.nodes, n)
	}
	g.active.Store(g.nodes[0].lane0)
	return nil
}

// startTick reads the clock once and refuses a clock before the epoch or past the
// layout's end.
func (g *Generator) startTick() (int64, error) {
	tick, err := g.tickAt(g.clk.Now())
	if err != nil {
		return 0, err
	}
	if tick > g.maxTick {
		return 0, g.exhausted()
	}
	return tick, nil
}

// setWarn sets the first tick of the warning window (WarnBefore).
func (g *Generator) setWarn(opts Options) {
	g.warnTick = g.maxTick + 1
	if opts.WarnBefore >= 0 {
		warn := opts.WarnBefore
		if warn == 0 {
			warn = 365 * 24 * time.Hour
		}
		g.warnTick = max(0, g.maxTick+1-int64(warn)/g.unitNs)
	}
}

// register takes the generator's node values in the in-process guard (registry),
// all or none.
func (g *Generator) register() error {
	registry.Lock()
	defer registry.Unlock()
	for i, n := range g.nodes {
		if registry.live[n.key] {
			for _, taken := range g.nodes[:i] {
				delete(registry.live, taken.key)
			}
			return g.inUse(n.values)
		}
		registry.live[n.key] = true
	}
	return nil
}
