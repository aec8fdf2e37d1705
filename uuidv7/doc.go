// Package uuidv7 issues RFC 9562 version 7 UUIDs: 128-bit, time-ordered, made with
// no coordination between processes.
//
// # Layout
//
// Sixteen bytes, most significant first (RFC 9562 §5.7):
//
//	bytes 0-5   unix_ts_ms  48 bits  milliseconds since 1970-01-01T00:00:00Z
//	byte  6     ver          4 bits  7
//	bytes 6-7   rand_a      12 bits  sub-millisecond fraction of the clock reading
//	byte  8     var          2 bits  binary 10, the RFC 9562 variant
//	bytes 8-15  rand_b      62 bits  random, from crypto/rand
//
// The 48-bit time lasts until the year 10889. rand_a follows RFC 9562 §6.2, method 3,
// "Replace Leftmost Random Bits with Increased Clock Precision": the fraction of the
// millisecond times 4096, rounded down, a step of about 244 ns. This is the choice
// PostgreSQL 18's uuidv7() makes, and google/uuid's NewV7 fills the bits in a similar
// way. It was preferred over method 1 (a counter in rand_a) because it costs nothing
// more, tells apart IDs of one millisecond by time instead of by a count that leaks
// the rate, and degrades into a counter anyway when the clock has not moved.
//
// # Guarantees
//
// A [Generator] treats unix_ts_ms and rand_a together as one 60-bit timestamp and
// gives every ID a larger one than the ID before: the clock's reading when the clock
// has moved on, else the previous value plus one (one 244 ns step; RFC 9562 §6.2 lets
// the increased-precision bits act as a counter and the timestamp run ahead of the
// clock). So:
//
//   - IDs from one Generator strictly increase in issue order, as bytes, as strings
//     and as time, across any number of goroutines (a call that starts after another
//     returned gets a larger ID), and also when the clock steps backwards: IDs then go
//     on from the last one issued.
//   - A Generator issues 4,096 IDs per millisecond at most without running ahead of
//     the clock. Beyond that it borrows the next milliseconds, up to
//     [Options.MaxDrift] (1 s by default) ahead of the clock, and then sleeps until the
//     clock catches up: the time in an ID is never more than MaxDrift ahead of the
//     latest reading of the clock. After a clock step backwards, IDs go on inside
//     the last issued millisecond; when its fractions run out, Next waits for the
//     clock to come back within MaxDrift. (The default clock.NewSystem never steps
//     back inside a process.)
//   - Across generators, processes and machines nothing is coordinated: two IDs
//     collide only if they share the millisecond, the fraction and all 62 random
//     bits: for n IDs made in one millisecond by different generators, a chance of
//     about n²/2^63 (ignoring the fraction), so about 10^-7 for a million of them.
//     Order across generators follows the clocks of the machines that made them.
//   - The time field never wraps: a clock before 1970 gives [ErrBeforeEpoch], and the
//     end of the 48-bit field (the year 10889) [ErrExhausted].
//
// # When to choose it over flurry's 64-bit IDs
//
// A snowflake ID fits a BIGINT and sorts by time, but each generator needs a node
// value of its own (configuration or a lease), and the per-node rate is capped by the
// layout. A UUIDv7 needs nothing: any process, container or client can make IDs
// without a node value, a lease store or a server, and merge them later. It costs 128
// bits (a UUID or BINARY(16) column, twice a BIGINT), and its order across machines
// is only as good as their clocks. Because the time comes first, new rows land at the
// end of a B-tree index, as with snowflake IDs and unlike UUIDv4, whose random
// inserts scatter over the whole index. Choose it when coordination is the problem,
// when IDs are made at the edge, or when the column is already a UUID. See also
// package [github.com/flurryid/flurry/objectid] for 96-bit MongoDB ObjectIds.
//
// # Text form
//
// [UUID.String] gives the canonical 36-character lower-case form
// (017f22e2-79b0-7cc3-98c4-dc0c0c07398f). [Parse] also accepts upper case, braces
// and the urn:uuid: prefix, and only version 7 UUIDs of the RFC 9562 variant.
package uuidv7
