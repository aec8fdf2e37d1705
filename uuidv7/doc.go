// Package uuidv7 issues RFC 9562 version 7 UUIDs: 128-bit, time-ordered, made with
// no coordination between processes (no node value, no lease, no server).
//
//	g, err := uuidv7.New(uuidv7.Options{}) // system clock, crypto/rand
//	u, err := g.Next(ctx)                  // u.String(): 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
//
// Sixteen bytes, most significant first (RFC 9562 §5.7):
//
//	bytes 0-5   unix_ts_ms  48 bits  milliseconds since 1970-01-01T00:00:00Z
//	byte  6     ver          4 bits  7
//	bytes 6-7   rand_a      12 bits  sub-millisecond fraction of the clock reading (§6.2, method 3)
//	byte  8     var          2 bits  binary 10, the RFC 9562 variant
//	bytes 8-15  rand_b      62 bits  random, from crypto/rand
//
// IDs from one [Generator] strictly increase in issue order (as bytes, strings and
// time), across goroutines and across a clock step backwards. Above 4,096 IDs per
// millisecond a Generator runs ahead of the clock, at most [Options].MaxDrift (1 s by
// default), then sleeps. Across generators nothing is coordinated: two IDs collide
// only if they share the millisecond, the fraction and all 62 random bits. The time
// field never wraps: [ErrBeforeEpoch] before 1970, [ErrExhausted] after the year
// 10889. [Parse] accepts the canonical form, upper case, braces and urn:uuid:.
//
// The guarantees in full, why rand_a holds the clock's fraction, and when to choose
// UUIDv7 over flurry's 64-bit IDs: docs/uuidv7-objectid.md. See also package
// [github.com/flurryid/flurry/objectid] for 96-bit MongoDB ObjectIds.
package uuidv7
