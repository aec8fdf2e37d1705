// Package redisstore keeps node-value leases and their high-water marks in Redis.
// Every operation is one Lua script, atomic in Redis, and expiry is judged by Redis
// TIME, so the clients' clocks do not matter.
//
//	o, err := redisstore.ParseURL("redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster/0?wait_replicas=1")
//	if err != nil { ... }
//	st, err := redisstore.Open(ctx, o)
//	if err != nil { ... }
//	defer st.Close()
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l},
//		lease.Options{Store: st, Scope: "orders"})
//
// [ParseURL] takes redis://, rediss://, redis+sentinel:// and rediss+sentinel://
// URLs; prefix=, wait_replicas=, wait_timeout= and request_timeout= set the
// [Options] fields of those names, and go-redis reads the rest. [New] wraps a client
// the caller made, also a *redis.ClusterClient: a scope's keys share one hash tag.
//
// The marks are only as durable as Redis makes them: run it with appendonly yes.
// Replication is asynchronous, so after a failover a value can have two holders and
// a mark can go back; [Options].WaitReplicas narrows that window and fails a write
// with [ErrNotReplicated] instead, but is no consensus. For a store that cannot lose
// a write, use etcd or SQL.
//
// The keys, durability, replication, the clock and timeouts in full are in
// docs/leases.md ("Redis store") and docs/high-availability.md.
package redisstore
