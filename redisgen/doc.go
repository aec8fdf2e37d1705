// Package redisgen issues time-ordered IDs built inside Redis: the well-known
// Redis + Lua generator, without its wrap, rounding and clock-step bugs. Clients need
// no node value and no clock of their own: the Redis server's TIME and a node value
// stored in Redis make the ID, so any number of processes may share a namespace,
// and a fleet of independent Redis servers, each with its own node value, issues IDs
// that never collide.
//
//	l, _ := layout.Parse("twitter")
//	g, err := redisgen.New(ctx, redisgen.Options{URL: "redis://127.0.0.1:6379/0", Namespace: "orders", Layout: l})
//	if err != nil { ... }
//	defer g.Close()
//	err = g.SetNode(ctx, layout.NodeValues{1, 3}) // once per Redis server, as `flurry redis set-node`
//	id, err := g.Next(ctx)                        // one round trip
//	n, err := g.NextN(ctx, batch)                 // up to the rest of the tick in one round trip
//
// [Options] takes a client or a URL (redis://, rediss://, redis+sentinel://), the
// namespace (its keys share one Redis Cluster slot) and the layout every client of
// the namespace uses.
//
// Errors match with errors.Is: [ErrClockBehind] (a [*ClockBehindError] carries the
// gap), [ErrExhausted], [ErrNodeUnset], [ErrNodeInvalid], [ErrLayoutMismatch],
// [ErrBeforeEpoch] and [ErrClosed]. Redis's own errors are wrapped with %w.
//
// Run Redis with AOF (appendonly yes). Replication is asynchronous: IDs stay unique
// across a failover while the new primary's clock is past the old one's last tick;
// for a guarantee across any failover use package snowflake with a lease store.
// [Generator.CheckRedis] says which of the settings uniqueness relies on the
// primary lacks ([ErrUnchecked] when it would not tell), and
// [Options.RestoreNode] writes the node value back into a Redis that lost its
// data, above a floor, instead of refusing with [ErrNodeUnset].
//
// docs/redisgen.md has what the original script gets wrong, what each script does,
// the plain path (one HINCRBY within Options.PlainWindow of a script call) and why
// its IDs are as unique as the script's, the keys, Redis Cluster, the caveats and
// measured numbers.
package redisgen
