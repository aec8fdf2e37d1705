package redisgen

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrClockBehind is matched (errors.Is) by the *ClockBehindError that Next and
	// NextN return when Redis TIME stands behind the last tick the namespace issued
	// by more than Options.BehindWait. Nothing was issued; calls succeed again by
	// themselves once Redis's clock has passed that tick.
	ErrClockBehind = errors.New("redisgen: Redis clock is behind the last issued tick")

	// ErrExhausted is returned by New when the layout's time field has run out by
	// this machine's clock, and by Next and NextN when it has by Redis's: issuing
	// more would wrap the field or set the sign bit. Move to a layout with a later
	// epoch or a longer time field (and a new namespace).
	ErrExhausted = errors.New("redisgen: time field exhausted")

	// ErrNodeUnset is wrapped by the error of Next and NextN when the namespace's
	// node key ({namespace}:node) lacks a field of the layout, and by Generator.Node
	// when it does. Set it on every Redis of the fleet, each to its own value, with
	// Generator.SetNode or `flurry redis set-node`.
	ErrNodeUnset = errors.New("redisgen: node value not set in Redis")

	// ErrNodeInvalid is wrapped by the error of Next, NextN and Generator.Node when
	// the node key holds something that is not a value of the layout's node field
	// (set by hand, or for another layout), and by SetNode for a value out of range.
	ErrNodeInvalid = errors.New("redisgen: invalid node value")

	// ErrLayoutMismatch is wrapped by the error of Next and NextN when the namespace
	// has issued IDs with another layout: ticks, sequences and node fields of one
	// layout mean other things in another, so the IDs could collide. Use a new
	// namespace for a new layout.
	ErrLayoutMismatch = errors.New("redisgen: namespace used with another layout")

	// ErrBeforeEpoch is wrapped by the error of Next and NextN when Redis TIME reads
	// a time before the layout's epoch. Fix the Redis server's clock.
	ErrBeforeEpoch = errors.New("redisgen: Redis clock is before the layout's epoch")

	// ErrClosed is returned by calls on a closed Generator.
	ErrClosed = errors.New("redisgen: generator closed")
)

// ClockBehindError reports that Redis TIME stands behind the last tick the
// namespace issued: the Redis server's clock stepped back, or a failover moved the
// namespace to a server whose clock is behind. It matches ErrClockBehind.
type ClockBehindError struct {
	// Namespace is the generator's namespace.
	Namespace string
	// Gap is how long Redis's clock needs to reach the start of the last issued
	// tick; calls succeed again after it.
	Gap time.Duration
	// LastTick is the last tick issued (the {namespace}:last key); Tick is the tick
	// Redis TIME reads now.
	LastTick, Tick int64
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("redisgen: namespace %q: Redis TIME is %v behind the last issued tick (%d, now %d): its clock stepped back, or a failover moved to a server whose clock is behind; refusing to issue until it catches up (check the server's NTP; retry after the gap)",
		e.Namespace, e.Gap, e.LastTick, e.Tick)
}

// Is reports whether target is ErrClockBehind.
func (e *ClockBehindError) Is(target error) bool { return target == ErrClockBehind }
