// Package etcdstore keeps node-value leases and their high-water marks in etcd. A
// held value is a key attached to an etcd lease, which etcd deletes when it expires;
// the marks are plain keys that survive it. Every change is a transaction that
// compares revisions, and etcd commits through Raft, so there is no failover window.
//
//	o, err := etcdstore.ParseURL("etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379/flurry/lease")
//	if err != nil { ... }
//	st, err := etcdstore.Open(ctx, o)
//	if err != nil { ... }
//	defer st.Close()
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l},
//		lease.Options{Store: st, Scope: "orders"})
//
// The URL's path is the key prefix; dial_timeout= and request_timeout= set
// [Options].Client.DialTimeout and [Options].RequestTimeout. [New] wraps a client the
// caller made. TTLs are whole seconds, at least etcd's minimum (2 s by default): a
// lease lasts at least as long as asked, never less. Do not delete the mark keys.
//
// The keys, TTLs and the cost of Acquire on large pools are in docs/leases.md ("etcd
// store").
package etcdstore
