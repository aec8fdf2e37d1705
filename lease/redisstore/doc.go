// Package redisstore keeps node-value leases and their high-water marks in Redis.
//
// Every operation is one Lua script, run with EVALSHA, so it is atomic in Redis;
// lease expiry is judged by Redis TIME inside the scripts, so the clients' clocks do
// not matter. Nothing this package writes has a Redis TTL: a lease's expiry is a
// score, and an expired lease is moved aside by the next script that sees it, so
// the marks survive expiry and release.
//
// # Keys
//
// Each scope has six keys, with the hash tag {Prefix:scope} so that Redis Cluster
// keeps them in one slot (Prefix defaults to "flurry:lease"):
//
//	{flurry:lease:orders/dc1}:marks   hash   member -> mark (Unix ms); one field per value ever held
//	{flurry:lease:orders/dc1}:held    zset   member, score = lease expiry (Unix ms, Redis TIME)
//	{flurry:lease:orders/dc1}:free    zset   member, score = mark: values with a mark and no lease
//	{flurry:lease:orders/dc1}:tokens  hash   member -> token of the live lease
//	{flurry:lease:orders/dc1}:owners  hash   member -> owner of the live lease
//	{flurry:lease:orders/dc1}:next    string the lowest value never handed out
//
// A member is the node value in seven zero-padded digits ("0000042"). Acquire picks
// the first member of the free set below the pool size (lowest mark, then lowest
// value), or the value in next when that has a lower mark (a never-used value has
// mark 0), so it costs O(log n) however large the pool, up to the 2^22 values that
// package lease allows. Callers that use two pool sizes for one scope make Acquire
// step over the free values above the smaller size. Do not delete the keys: the
// marks in them are what make reusing a value safe.
//
// # Durability and replication
//
// The marks are only as durable as Redis makes them. Run Redis with AOF
// (appendonly yes, appendfsync everysec or always): a Redis that restarts empty
// has forgotten every lease and mark, so a value can be handed to a second holder
// while the first still issues IDs, and a new holder starts from mark 0.
//
// Redis replication is asynchronous. After a failover the promoted replica may
// lack the latest Acquire, Renew or Release: the value can then be given to a
// second holder while the first still holds it, and a mark can go back. To narrow
// that window, set [Options.WaitReplicas]: after each write the store sends WAIT on
// the same connection and fails the operation with [ErrNotReplicated] (not
// [lease.ErrLost]) when fewer replicas acknowledged it within [Options.WaitTimeout].
// A write that reached n replicas is in their memory, so a failover to one of them
// keeps it, and Sentinel and Cluster favour the replica with the most replicated
// data. WAIT does not make Redis strongly consistent: a failover may still promote
// a replica that did not acknowledge, a replica without persistence that restarts
// forgets, and a failed WAIT does not undo the write on the primary (a failed
// Acquire is released at once, a failed Renew or Release is simply reported). For
// a store that cannot lose a write, use etcd or SQL.
//
// The expiry is judged by the Redis primary's wall clock (TIME): a jump forward of
// that clock expires leases early. Keep it synchronised with slewing NTP.
//
// # Connections
//
// A request that times out may still be run by Redis later: a Renew then extends
// the lease after all, an Acquire holds a value nobody knows until its TTL passes.
// Neither breaks uniqueness. [Open] turns on ContextTimeoutEnabled so that the
// context's deadline bounds every call; clients given to [New] should too, or a
// stalled server blocks calls for the client's ReadTimeout and retries.
package redisstore
