// Package redisgen issues time-ordered IDs built inside Redis by a Lua script: the
// Redis-native scheme of seed 001 ("snowflake-style IDs with Redis 2.6 and Lua"),
// done right. Clients need no node value and no clock of their own: the Redis
// server's TIME and a node value stored in Redis make the ID, so any number of
// processes may share a namespace, and a fleet of independent Redis servers, each
// with its own node value, issues IDs that never collide.
//
// # What was wrong with seed 001's script
//
// The seed's script was, in full,
//
//	local seq = tonumber(redis.call('INCR', 'sequence')) % 4096
//	local node = tonumber(redis.call('GET', 'node_id')) % 1024
//	local time = redis.call('TIME')
//	local time41 = ((tonumber(time[1]) * 1000) + (tonumber(time[2]) / 1000)) - epoch
//	return (time41 * (2 ^ 22)) + (node * (2 ^ 12)) + seq
//
// and it can return duplicates in five ways:
//   - INCR % 4096 wraps: the 4097th ID of a millisecond repeats the first.
//   - time41 keeps the microseconds as a fraction (time[2] / 1000 is not floored),
//     and the fraction times 2^22 spills into the node and sequence bits.
//   - Lua numbers are doubles, exact only below 2^53; the ID is about 2^61, so its
//     low 8 bits are rounded away: 256 sequence values give one ID.
//   - node % 1024 silently maps node 1025 onto node 1.
//   - nothing notices Redis's clock stepping back, so old (tick, sequence) pairs
//     come again.
//
// # What this package does instead
//
// One script (loaded with SCRIPT LOAD, run with EVALSHA; go-redis falls back to EVAL
// on NOSCRIPT) does everything atomically inside Redis:
//   - reads TIME and turns it into a tick of the layout (any unit, any epoch);
//   - keeps the last tick issued and the last sequence value used in it in one
//     hash; a tick's sequence values are handed out with a bound, never wrapped:
//     when they are used up the script answers "the next tick starts in N µs" and
//     the Go side sleeps that long (no spin) and asks again;
//   - refuses when TIME is behind the last issued tick (a clock step back, or a
//     failover to a server whose clock is behind): the Go side waits up to
//     Options.BehindWait, then returns a *ClockBehindError with the gap;
//   - refuses when the tick no longer fits the time field (ErrExhausted);
//   - reads the node value from the namespace's node key and checks its range;
//   - composes the ID exactly as two 32-bit halves, for any layout of package
//     layout (node fields in any order, the sequence field anywhere below the
//     time field), so that layout.Decompose takes it apart.
//
// NextN takes up to a whole tick's sequence values in one run, so a client gets
// thousands of IDs per round trip.
//
// # Keys
//
// A namespace has two keys, both with the hash tag {namespace}:
//
//	{orders}:node   hash  node field name -> value, e.g. datacenter 1, worker 3
//	{orders}:last   hash  tick -> last tick issued, seq -> last sequence value used in it,
//	                      layout -> the layout's text form (a namespace serves one layout)
//
// Neither expires. The last key is the namespace's high-water mark: deleting it
// while Redis's clock is behind the tick it held allows duplicates. There is no
// key per tick: the seed's single counter, or a key per tick with INCR and PEXPIRE,
// would cost more commands per call and keys that are not declared to Redis.
//
// # Redis Cluster
//
// Redis Cluster requires every key a script touches to be passed in KEYS (so the
// client can route the call and Redis can check it) and, without the
// allow-cross-slot-keys flag, all of them to hash to one slot. The script touches
// exactly its two KEYS, and the hash tag puts them in one slot, so it runs on a
// cluster as on a single server; go-redis's ClusterClient routes EVALSHA by the
// first key and loads the script on every shard. One namespace lives on one shard,
// so its throughput is one shard's. To spread one ID space over several shards,
// use several namespaces (orders-0, orders-1, ...) and give each a different node
// value: their IDs cannot collide. The same holds for a fleet of independent
// Redis servers: one Generator per server, each server with its own node value.
//
// # Replication and persistence
//
// Redis replicates asynchronously. After a failover the promoted replica may lack
// the latest writes to the last key: it may hold an older tick or sequence, or no
// last key at all. The generator then relies on the new primary's TIME alone: the
// IDs stay unique as long as the new primary's clock is past the last tick the
// old primary issued, which holds when the clocks are synchronised (NTP) and the
// failover takes longer than their difference (Sentinel and Cluster take seconds).
// A new primary whose clock is behind that by more than the failover time may
// reissue (tick, sequence) pairs the old one issued in its last moments. The node
// key is written rarely and replicates long before it matters. To narrow the
// window, set min-replicas-to-write on the primary; for a guarantee that survives
// any failover, use package snowflake with a lease store instead. Run Redis with
// AOF (appendonly yes): a Redis restarted empty has lost its node key (the
// generator then stops with ErrNodeUnset) and its last key.
//
// Scripts are replicated by their effects (Redis 5 and later), so replicas store
// the tick and sequence the primary computed from its own TIME.
//
// # Errors
//
// Errors match with errors.Is: ErrClockBehind (a *ClockBehindError carries the
// gap), ErrExhausted, ErrNodeUnset, ErrNodeInvalid, ErrLayoutMismatch,
// ErrBeforeEpoch and ErrClosed. Redis's own errors are wrapped with %w.
package redisgen
