package flurry

import "context"

// Source issues IDs. The integer generators of flurry implement it:
// *snowflake.Generator (also the one lease.NewGenerator returns),
// *segment.Allocator and *redisgen.Generator, so code that only takes IDs can
// accept any of them.
type Source interface {
	// Next returns a new ID.
	Next(ctx context.Context) (ID, error)
	// NextN fills dst with new IDs, in increasing order, and returns how many it
	// filled: len(dst), or fewer with the error that stopped it.
	NextN(ctx context.Context, dst []ID) (int, error)
}
