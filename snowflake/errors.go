package snowflake

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrClockBehind is matched (errors.Is) by the *ClockBehindError that Next
	// returns when the clock stands further behind the last issued tick than the
	// policy allows. Nothing was issued; the generator resumes by itself once the
	// clock has caught up.
	ErrClockBehind = errors.New("snowflake: clock moved backwards")

	// ErrExhausted is returned by New and Next once the layout's time field has run
	// out: issuing more would wrap the field or set the sign bit. Move to a layout with
	// a later epoch or a longer time field.
	ErrExhausted = errors.New("snowflake: time field exhausted")

	// ErrInUse is returned by New when a live generator in this process already has the
	// same namespace, layout shape and node value (or one of the standby values). Two
	// such generators would issue the same IDs, a duplicate that has reached
	// production in snowflake services. Share one generator, or Close the first.
	ErrInUse = errors.New("snowflake: node value already in use in this process")

	// ErrClosed is returned by calls on a closed generator or pool.
	ErrClosed = errors.New("snowflake: generator closed")

	// ErrBeforeEpoch is returned when the clock reads a time before the layout's epoch.
	ErrBeforeEpoch = errors.New("snowflake: clock is before the layout's epoch")
)

// ClockBehindError reports a clock that stands behind the last issued tick by more
// than the generator may absorb. It matches ErrClockBehind.
type ClockBehindError struct {
	// Gap is how far the clock is behind the last issued ID's tick.
	Gap time.Duration
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("snowflake: clock moved backwards: it is %v behind the last issued ID or the node value's high-water mark; refusing to issue until it catches up (the Logical policy issues ahead of the clock within MaxDrift instead)", e.Gap)
}

// Is reports whether target is ErrClockBehind.
func (e *ClockBehindError) Is(target error) bool { return target == ErrClockBehind }
