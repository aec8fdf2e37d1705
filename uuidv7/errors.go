package uuidv7

import "errors"

var (
	// ErrInvalid is wrapped by the error that [Parse], [UUID.UnmarshalText] and
	// [FromBytes] return for input that is not a version 7 UUID; the message says
	// why.
	ErrInvalid = errors.New("uuidv7: invalid UUID")

	// ErrBeforeEpoch is returned by [Generator.Next] and [Generator.NextN] when the
	// clock reads a time before 1970-01-01T00:00:00Z, which a UUIDv7 cannot carry.
	// Fix the clock.
	ErrBeforeEpoch = errors.New("uuidv7: clock is before 1970-01-01T00:00:00Z")

	// ErrExhausted is returned by [Generator.Next] and [Generator.NextN] when the
	// next ID's time would not fit in 48 bits of milliseconds (the year 10889):
	// issuing it would wrap the time field. A clock.Clock reads int64 nanoseconds,
	// which end in 2262, so this is a guard, not a limit anyone will meet.
	ErrExhausted = errors.New("uuidv7: 48-bit millisecond time field exhausted")
)
