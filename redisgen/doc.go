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
// The Generator reads the node values from the namespace's node key on its first
// call and checks their ranges, and makes two scripts for the layout and those
// values (Next's and NextN's), run with EVALSHA (EVAL on NOSCRIPT). A script does
// everything else atomically inside Redis:
//   - checks that the node key still holds the values read, by string equality;
//     when it does not (set-node, SetNode or a hand edit changed them) it answers
//     -1 and the Generator reads them again, so the next scripted ID carries the
//     new value;
//   - reads TIME and turns it into a tick of the layout (any unit, any epoch);
//   - takes the IDs from the namespace's last key: one HINCRBY of a counter of
//     slots (tick*2^seqBits + seq) in the counter format, a read and a write of the
//     last tick and sequence in the hash format (below); a tick's sequence values
//     are handed out with a bound, never wrapped: when they are used up the script
//     answers "the next tick starts in N µs" and the Go side sleeps that long (no
//     spin) and asks again;
//   - refuses when TIME is behind the last issued tick (a clock step back, or a
//     failover to a server whose clock is behind): the Go side waits up to
//     Options.BehindWait, then returns a *ClockBehindError with the gap;
//   - refuses when the tick no longer fits the time field (ErrExhausted), and when
//     the namespace was used with another layout (ErrLayoutMismatch);
//   - answers the tick and sequence (Next: the slot, one integer); the Go side
//     composes the ID from them and the node values, so that layout.Decompose
//     takes it apart. The script never holds an ID as a Lua number (a double).
//
// NextN takes up to a whole tick's sequence values in one run, so a client gets
// thousands of IDs per round trip.
//
// Next takes most IDs without the script (the plain path): within
// Options.PlainWindow (10 ms) of a script call that issued an ID of tick T, it
// sends one HINCRBY of its node values' counter and takes the slot when the slot is
// in T and both calls were sent and answered within the window. The counter only
// grows and is named after the node values, so the slot is unique; the window
// bounds how far such IDs lag behind TIME and keeps a failover to a lagging replica
// from handing out a slot twice, as long as the failover (from the old primary's
// last answer to the new one's first) takes longer than the window: the plain
// path's one assumption beyond the script's. So the window is at most 10 ms, or the
// layout's unit if longer; a scripted promotion with a VIP move took 100 ms, and a
// window of 500 ms then issued every slot the replica lacked twice. A negative
// Options.PlainWindow turns the plain path off. docs/redisgen.md, "The plain path",
// has the argument, and internal/model/redisplain.pml checks it.
//
// # Keys
//
// A namespace has two keys, both with the hash tag {namespace}:
//
//	{orders}:node   hash  node field name -> value, e.g. datacenter 1, worker 3
//	{orders}:last   hash, counter format (time and sequence bits at most 53):
//	                  slot@<layout hash>/<node values> -> the next free slot of
//	                    those node values, tick*2^seqBits+seq+1
//	                  layout -> the layout's text form and a marker (see below)
//	                  floor -> the first counter format's counter, once moved
//	                hash, hash format (wider layouts, and all before the counter format):
//	                  tick -> last tick issued, seq -> last sequence value used in it,
//	                  layout -> the layout's text form
//
// Neither expires. The last key is the namespace's high-water mark: deleting it
// while Redis's clock is behind the tick it held allows duplicates. A namespace in
// the hash format of a layout that fits the counter format, or in the first
// counter format (one next@<layout hash> counter for every node value), both
// written by older versions of this package, moves to the counter format on the
// first call, in that script run: the counter continues after the old state, which
// is deleted (and kept as floor), and the layout field gets the marker, which an
// older client takes for another layout, so it refuses every call with
// ErrLayoutMismatch. An old and a new
// client never both issue from states of their own; the move is one way.
//
// # Redis Cluster
//
// Redis Cluster requires every key a script touches to be passed in KEYS (so the
// client can route the call and Redis can check it) and, without the
// allow-cross-slot-keys flag, all of them to hash to one slot. The script touches
// exactly its two KEYS, and the hash tag puts them in one slot, so it runs on a
// cluster as on a single server; go-redis's ClusterClient routes EVALSHA by the
// first key, and the script is loaded (EVAL after NOSCRIPT) on the shard that holds
// the namespace. One namespace lives on one shard,
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
