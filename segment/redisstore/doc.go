// Package redisstore keeps segment counters (a segment.Store) in Redis: every change
// to a tag is one Lua script, atomic in Redis and exact up to 2^63-1.
//
//	o, err := redisstore.ParseURL("redis://127.0.0.1:6379/0?wait_replicas=1")
//	if err != nil { ... }
//	st, err := redisstore.Open(ctx, o)
//	if err != nil { ... }
//	defer st.Close()
//	a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st}, Tag: "order"})
//
// [ParseURL] takes redis://, rediss://, redis+sentinel:// and rediss+sentinel://
// URLs; prefix=, wait_replicas=, wait_timeout= and request_timeout= set the
// [Options] fields of those names, and go-redis reads the rest. [New] wraps a client
// the caller made, also a *redis.ClusterClient: a tag's keys share one hash tag.
//
// Redis must keep every max it acknowledged: run it with appendonly yes and
// appendfsync always. Replication is asynchronous, so a failover can hand a range
// out twice; [Options].WaitReplicas narrows that window and fails a Take with
// [ErrNotReplicated] instead, but is no consensus. Where a failover must never cause
// a duplicate, use etcd or SQL.
//
// The keys, Redis Cluster, durability, replication and timeouts in full are in
// docs/segments.md ("Redis store") and docs/high-availability.md.
package redisstore
