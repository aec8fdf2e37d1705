// Package redisstore keeps segment counters (segment.Store) in Redis.
//
// Every change to a tag is one Lua script, run with EVALSHA, so it is atomic in
// Redis: a Take claims the lowest returned block above the caller's floor, or
// raises the tag's max by n, in one step, and two callers never get overlapping
// blocks. Counter values never pass through Lua's numbers (doubles, exact only up
// to 2^53): max is kept as a decimal string, compared as one, and raised with
// HINCRBY, Redis's exact 64-bit add; returned blocks are found by their padded
// members with ZRANGEBYLEX, not by scores. So a tag works up to 2^63-1.
//
// # Keys
//
// With the default prefix "flurry:segment" and the tag "orders":
//
//	{flurry:segment:orders}:tag       hash  max, step, desc, updated (Redis TIME in Unix ms)
//	{flurry:segment:orders}:returned  zset  "first:last" in 19-digit padded numbers, all scored 0
//	{flurry:segment}:tags             set   the names of all tags, for Tags
//
// Nothing here has a TTL. Do not delete a tag's hash: its max is what keeps fresh
// blocks above every value handed out.
//
// # Redis Cluster
//
// A tag's two keys share the hash tag {Prefix:tag}, so Take, Return and SetStep
// each touch one slot and run on a Cluster (give New a *redis.ClusterClient). The
// tag index is a key of its own in another slot: Create first adds the name to
// the index, then makes the tag's hash with a script, as two commands. A Create
// that fails between them leaves a name without a hash, which Tags skips and a
// repeated Create completes. Tags reads the index and then every tag's keys in a
// pipeline that go-redis splits by slot: it works on a Cluster, but it is not one
// snapshot (a tag created during the call may be missing). Resharding a slot
// while a script runs is Redis's business: scripts on one slot stay atomic.
//
// # Durability and replication
//
// A segment store must never forget a max it acknowledged: a Redis that restarts
// without the latest max hands the same values out again, and the allocators issue
// duplicate IDs. Without persistence (save "" and appendonly no) a restarted Redis
// has forgotten every tag (Take then fails with segment.ErrUnknownTag, which is
// the good case) or, with RDB snapshots alone, goes back to the max of the last
// snapshot: duplicates. Run Redis for this store with appendonly yes and
// appendfsync always, so each acknowledged Take is on disk; appendfsync everysec
// can lose the last second of Takes on a power loss.
//
// Redis replication is asynchronous. The primary answers a Take before its
// replicas have it, so after a failover the promoted replica may lack the latest
// Takes and hand the same ranges out again: duplicates. Set
// [Options.WaitReplicas] to narrow that window: after each write the store sends
// WAIT on the same connection, and when fewer replicas acknowledged it within
// [Options.WaitTimeout] the call fails with [ErrNotReplicated]; a Take that fails
// so does not hand its block out (the values are lost, never issued), a Return's
// block stays returned on the primary. A write that reached n replicas is in
// their memory, and Sentinel and Cluster favour the replica with the most
// replicated data when they promote one. WAIT is not a consensus: a failover may
// still promote a replica that did not acknowledge, a replica without persistence
// that restarts forgets, and a failed WAIT does not undo the write on the primary.
// Where a failover must never cause a duplicate, use etcd or SQL.
//
// # Connections
//
// A request that times out may still be run by Redis later: a Take then raises
// max (or claims a returned block) for nobody, and those values are never issued.
// That wastes values and never duplicates one. [Open] turns on
// ContextTimeoutEnabled so that the context's deadline bounds every call; clients
// given to [New] should too, or a stalled server blocks calls for the client's
// ReadTimeout and retries.
package redisstore
