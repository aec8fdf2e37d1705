package snowflake

import (
	"fmt"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

// OverflowPolicy says what Next does when a tick's sequence values are used up.
type OverflowPolicy uint8

const (
	// Wait sleeps until the next tick begins (a real sleep, never a spin, and with no
	// lock held), so IDs never run ahead of the clock. The zero value.
	Wait OverflowPolicy = iota
	// Borrow takes the next tick at once, running ahead of the clock, as long as the
	// issued IDs stay at most MaxDrift ahead; past that it waits. Bursts above the cap
	// are served without a stall and the drift is paid back when the load drops
	// (uid-generator and yitter borrow too, but without a bound).
	Borrow
)

// String returns "wait" or "borrow".
func (p OverflowPolicy) String() string {
	if p == Borrow {
		return "borrow"
	}
	return "wait"
}

// BehindPolicy says what Next does when the clock stands behind the last issued tick
// by more than WaitThreshold (a clock step backwards seen through a clock that is not
// monotonic, or a restart on a machine whose clock is behind).
type BehindPolicy uint8

const (
	// Fail returns a *ClockBehindError (errors.Is ErrClockBehind) with the gap. The zero
	// value.
	Fail BehindPolicy = iota
	// Logical keeps issuing on a logical clock: it goes on from the last issued tick,
	// taking the next tick when one runs out, as long as the IDs stay at most MaxDrift
	// ahead of the real clock. A gap larger than MaxDrift fails as Fail does.
	Logical
	// SwitchNode moves to the first Standby node value whose last tick is before the
	// clock, as game servers switch their app ID. IDs stay unique and each node value's IDs
	// still increase, but the generator's own sequence of IDs steps back in time at the
	// switch. When no standby value is usable it fails as Fail does.
	SwitchNode
)

// String returns "fail", "logical" or "switch-node".
func (p BehindPolicy) String() string {
	switch p {
	case Logical:
		return "logical"
	case SwitchNode:
		return "switch-node"
	}
	return "fail"
}

// SequenceStart says where the sequence starts in each new tick.
type SequenceStart uint8

const (
	// StartZero starts every tick at sequence 0. The zero value.
	StartZero SequenceStart = iota
	// StartRandom starts each tick at a pseudo-random value below RandomBelow, so IDs
	// modulo a shard count spread evenly even at low rates (Leaf uses 100, some
	// schemes 10). The tick holds that many fewer IDs.
	StartRandom
	// StartContinue starts each tick one past where the previous tick ended (as some
	// game-server schemes do: the sequence is not reset across milliseconds). Unlike
	// them it never wraps inside a tick, because a wrap
	// would issue a smaller ID after a larger one in the same millisecond; a tick that
	// starts at s holds 2^bits - s IDs, then the next tick starts at 0.
	StartContinue
)

// String returns "zero", "random" or "continue".
func (s SequenceStart) String() string {
	switch s {
	case StartRandom:
		return "random"
	case StartContinue:
		return "continue"
	}
	return "zero"
}

// Options configures a Generator. The zero Options is valid: the twitter layout, node
// value 0, the system clock, the Wait and Fail policies, a 10 ms rollback wait.
type Options struct {
	// Layout is the bit layout. Nil means the "twitter" preset.
	Layout *layout.Layout
	// Node holds the value of each node field, in layout order. Zero values are
	// allowed but mean every process left at the default shares node 0: give each
	// process its own value, or take one from a lease.
	Node layout.NodeValues
	// Standby lists further node values this generator owns, for the SwitchNode policy.
	// They are reserved in the in-process guard like Node.
	Standby []layout.NodeValues
	// Namespace scopes the in-process guard: two generators with the same layout shape
	// and node value may coexist when their namespaces differ, because their IDs go to
	// different tables. Empty is a namespace like any other.
	Namespace string
	// Clock is the time source. Nil means clock.NewSystem().
	Clock clock.Clock

	// Overflow is the policy when a tick's sequence is used up. Zero is Wait.
	Overflow OverflowPolicy
	// Behind is the policy when the clock is behind the last issued tick by more than
	// WaitThreshold. Zero is Fail.
	Behind BehindPolicy
	// MaxDrift is how far ahead of the clock the Borrow and Logical policies may issue
	// IDs. Zero means one second when either policy is chosen; setting it without
	// either is an error. It is rounded down to whole ticks.
	MaxDrift time.Duration
	// WaitThreshold is the largest clock step backwards that Next absorbs by sleeping
	// until the clock catches up (the common rule: wait out a small rollback).
	// Zero means 10 ms; negative means never wait, apply the Behind policy at once.
	WaitThreshold time.Duration

	// Start is where each tick's sequence starts. Zero is StartZero.
	Start SequenceStart
	// RandomBelow bounds the random start of StartRandom. Zero means 100, as in Leaf.
	// It is capped at half a lane's sequence values. Setting it with another Start is
	// an error.
	RandomBelow int

	// Lanes splits each tick's sequence values into this many independent lanes (a
	// power of two, at most 2^sequence bits), for the per-CPU mode: see [Generator.Lane].
	// Zero or one means one lane, and every ID is larger than every ID returned before
	// the call started.
	Lanes int

	// WarnBefore is how long before the layout's lifetime ends OnLifeLow is called.
	// Zero means 365 days; negative disables the warning.
	WarnBefore time.Duration
	// OnLifeLow is called once, from New or from the Next that first issues an ID in
	// the warning window, with the time left and the end of the lifetime. Nil means no
	// call. It must not call the generator.
	OnLifeLow func(left time.Duration, end time.Time)

	// Fence is set by package lease, whose NewGenerator makes a generator fed by a
	// lease; leave it nil. Its type is internal, so only lease can make one.
	Fence *fence.Fence
}

// MarshalText returns String's name, for configuration files and flags.
func (p OverflowPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "wait" or "borrow"; empty means Wait, the zero value.
func (p *OverflowPolicy) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "wait":
		*p = Wait
	case "borrow":
		*p = Borrow
	default:
		return fmt.Errorf("snowflake: overflow policy %q: use wait (sleep until the next tick) or borrow (take future ticks within MaxDrift)", b)
	}
	return nil
}

// MarshalText returns String's name, for configuration files and flags.
func (p BehindPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "fail", "logical" or "switch-node"; empty means Fail, the
// zero value.
func (p *BehindPolicy) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "fail":
		*p = Fail
	case "logical":
		*p = Logical
	case "switch-node":
		*p = SwitchNode
	default:
		return fmt.Errorf("snowflake: clock-behind policy %q: use fail (refuse with the gap), logical (issue ahead of the clock within MaxDrift) or switch-node (move to a standby node value)", b)
	}
	return nil
}

// MarshalText returns String's name, for configuration files and flags.
func (s SequenceStart) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "zero", "random" or "continue"; empty means StartZero, the
// zero value.
func (s *SequenceStart) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "zero":
		*s = StartZero
	case "random":
		*s = StartRandom
	case "continue":
		*s = StartContinue
	default:
		return fmt.Errorf("snowflake: sequence start %q: use zero, random (below RandomBelow, as Leaf does) or continue", b)
	}
	return nil
}
