package objectid

import "errors"

var (
	// ErrInvalid is wrapped by the error that [Parse], [ID.UnmarshalText] and
	// [FromBytes] return for input that is not an ObjectId; the message says why.
	ErrInvalid = errors.New("objectid: invalid ObjectId")

	// ErrBeforeEpoch is returned by [Generator.Next] and [Generator.NextN] when the
	// clock reads a time before 1970-01-01T00:00:00Z, which the unsigned 32-bit
	// time field cannot carry. Fix the clock.
	ErrBeforeEpoch = errors.New("objectid: clock is before 1970-01-01T00:00:00Z")

	// ErrExhausted is returned by [Generator.Next] and [Generator.NextN] from
	// 2106-02-07T06:28:16Z on, when the seconds no longer fit in 32 bits: issuing
	// more would wrap the time field to 1970.
	ErrExhausted = errors.New("objectid: 32-bit seconds time field exhausted (2106-02-07T06:28:16Z)")
)
