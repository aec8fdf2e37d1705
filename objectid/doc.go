// Package objectid issues MongoDB ObjectIds: 96-bit IDs, roughly time-ordered, made
// with no coordination between processes.
//
//	g, err := objectid.New(objectid.Options{}) // system clock, crypto/rand
//	id, err := g.Next(ctx)                     // id.String(): 507f1f77bcf86cd799439011
//
// Twelve bytes, most significant first, as the BSON specification and MongoDB's
// drivers define them:
//
//	bytes 0-3   time     32 bits  seconds since 1970-01-01T00:00:00Z, big-endian
//	bytes 4-8   random   40 bits  chosen once per Generator, from crypto/rand
//	bytes 9-11  counter  24 bits  big-endian, starts at a random value, +1 per ID
//
// A [Generator]'s IDs are unique: unlike MongoDB's drivers, which let the counter
// wrap within a second, it sleeps until the next second after 2^24 IDs in one. Its
// time field never goes back; IDs increase within a second except when the counter
// wraps, and across generators they are ordered only by second. Across generators
// uniqueness rests on the 40-bit random value, made once per Generator. The time runs
// out at 2106-02-07T06:28:16Z ([ErrExhausted], never a wrap). [ID.String] gives 24
// lower-case hex digits, which [Parse] reads back.
//
// The guarantees and limits in full, and when to choose ObjectIds over flurry's
// 64-bit IDs: docs/uuidv7-objectid.md.
package objectid
