// Package objectid issues MongoDB ObjectIds: 96-bit IDs, roughly time-ordered, made
// with no coordination between processes.
//
// # Layout
//
// Twelve bytes, most significant first, as the BSON specification and MongoDB's
// drivers define them:
//
//	bytes 0-3   time     32 bits  seconds since 1970-01-01T00:00:00Z, big-endian
//	bytes 4-8   random   40 bits  chosen once per Generator, from crypto/rand
//	bytes 9-11  counter  24 bits  big-endian, starts at a random value, +1 per ID
//
// For example 507f1f77bcf86cd799439011 was made at 2012-10-17T21:13:27Z (0x507f1f77)
// by a process whose random value is bcf86cd799, with counter 0x439011.
//
// # Guarantees and limits
//
//   - Unique per Generator: within one second a Generator's IDs differ in the counter.
//     The counter wraps modulo 2^24 as MongoDB's does, so a generator that issued
//     more than 16,777,216 IDs in one second would repeat one. MongoDB's drivers let
//     that happen; a Generator instead counts the IDs it issued in the current second
//     and, once it has issued 2^24, sleeps until the next second. That is the one
//     deviation from the drivers' behaviour, and it caps a Generator at 16,777,216
//     IDs per second.
//   - The time field never goes back within a Generator: after a clock step
//     backwards, IDs keep the last issued second until the clock catches up (still
//     counted against that second's 2^24), so the count above stays sound. The default
//     clock.NewSystem never steps back inside a process anyway.
//   - Not strictly increasing: IDs of one Generator increase within a second, except
//     once per 2^24 IDs when the counter wraps from ffffff to 000000; across seconds
//     they increase with the time field. Across generators they are ordered only by
//     second (k-sorted), then by random value.
//   - Across generators, uniqueness rests on the 40-bit random value: MongoDB's
//     specification makes it once per process, this package once per Generator, so
//     two generators in one process are told apart as two processes are. Two
//     generators with the same random value (chance about k²/2^41 for k generators)
//     could collide only if their counters also met in the same second.
//   - Time: 32 unsigned bits of seconds run out at 2106-02-07T06:28:16Z, after which
//     Next returns [ErrExhausted] rather than wrap to 1970. (Some drivers read the
//     field as signed, which ends in 2038-01-19.) A clock before 1970 gives
//     [ErrBeforeEpoch].
//
// # When to choose it over flurry's 64-bit IDs
//
// ObjectIds are what MongoDB collections use for _id, and what tools around MongoDB
// expect; choose them to feed such a collection, or to match IDs a MongoDB driver
// makes elsewhere. Like UUIDv7 (package [github.com/flurryid/flurry/uuidv7]) they
// need no node value, lease or server, and because the time comes first, inserts go
// to the end of an index. They cost 96 bits (a 24-character hex string or 12 raw
// bytes), their time has one-second resolution, and their order inside a second
// across generators is not time order. A snowflake ID is smaller (a BIGINT), finer
// in time and strictly ordered per node, but needs each node value handed out once.
//
// # Text form
//
// [ID.String] gives 24 lower-case hex digits; [Parse] accepts exactly 24 hex digits
// in either case and nothing else.
package objectid
