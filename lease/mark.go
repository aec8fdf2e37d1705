package lease

import "time"

// unixMilli is an instant in milliseconds since the Unix epoch: the unit of the
// store's high-water marks (Lease.Mark, Record.Mark) and of snowflake.Grant's Above
// and Through. The session's clock, and the fence measured on it (Grant.Until),
// count nanoseconds. With a type of its own a mark cannot be compared with, or added
// to, a clock reading without a conversion, and the conversions are the three below
// and the int64 of a store's Lease.Mark.
type unixMilli int64

// milliOf returns the millisecond that the clock reading ns (nanoseconds since the
// Unix epoch) falls in.
func milliOf(ns int64) unixMilli { return unixMilli(ns / int64(time.Millisecond)) }

// ns returns the start of m in nanoseconds since the Unix epoch, the clock's unit.
func (m unixMilli) ns() int64 { return int64(m) * int64(time.Millisecond) }

// time returns m as a time.Time in UTC, for Status and logs.
func (m unixMilli) time() time.Time { return time.UnixMilli(int64(m)).UTC() }

// reservation returns the mark a holder writes to the store, and then grants its
// generator through, when its clock reads now (nanoseconds). Acquisition and renewal
// both use it:
//
//	reservation = max(held, max(above, now) + ahead)
//
// held is the mark the store already has under this lease (at acquisition: above,
// the mark the holder found), above is the mark the holder starts above, and ahead is
// how far beyond the clock a write reserves (Window plus the renewal interval). The
// result must be
//   - at or above held: the store keeps the higher of the two anyway, and the
//     generator may already be issuing through held, so a grant must never move its
//     Through back;
//   - a whole ahead above above: the generator issues only in ticks that start after
//     above and at or before the mark, so when the clock is behind above (a new
//     holder on a slower clock, or a Logical generator running ahead of its clock),
//     now + ahead would leave it no tick to issue in; counting from max(above, now)
//     gives it ahead's worth;
//   - ahead beyond now: the next renewal comes one interval later, and a whole
//     interval of reservation must still be left then, so the generator does not
//     stop at the end of its window while the store is healthy.
//
// On a renewal held is already at least above + ahead: the acquisition wrote that,
// and marks only grow. So while the clock is behind above, a renewal leaves the mark
// where it is. Adding ahead to held instead, on every renewal, would push the mark
// further beyond the clock each time, and a holder taking the value after a crash
// would have to wait for all of it; once the clock has passed above, the formula is
// max(held, now + ahead).
func reservation(held, above unixMilli, now int64, ahead time.Duration) unixMilli {
	return max(held, max(above, milliOf(now))+unixMilli(ahead.Milliseconds()))
}
