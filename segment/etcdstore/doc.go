// Package etcdstore keeps segment counters (a segment.Store) in etcd. Every change is
// a transaction that compares revisions, and etcd commits through Raft, so a Take
// that returned survives a leader change or a restart: there is no failover window.
//
//	o, err := etcdstore.ParseURL("etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379/flurry")
//	if err != nil { ... }
//	st, err := etcdstore.Open(ctx, o)
//	if err != nil { ... }
//	defer st.Close()
//	a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st}, Tag: "order"})
//
// The URL's path is the key prefix; dial_timeout= and request_timeout= set
// [Options].Client.DialTimeout and [Options].RequestTimeout. [New] wraps a client the
// caller made. Do not delete a tag record (Prefix/segment/tags/NAME): its max keeps
// fresh blocks above every value handed out.
//
// The keys, the transactions and their retries, and tag names are described in
// docs/segments.md ("etcd store").
package etcdstore
