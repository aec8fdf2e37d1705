// Package zkstore keeps node-value leases and their high-water marks in
// ZooKeeper. Each value of a scope is one persistent node whose data holds the
// holder, its token, its TTL, the value's mark and its epoch; every change is a
// write conditioned on the node's version, and ZooKeeper commits writes through its
// leader and a quorum (Zab), so two holders never both win one value and an
// acknowledged write survives the loss of any minority of the ensemble.
//
//	o, err := zkstore.ParseURL("zk://10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181/flurry/lease")
//	if err != nil { ... }
//	st, err := zkstore.Open(ctx, o)
//	if err != nil { ... }
//	defer st.Close()
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: l},
//		lease.Options{Store: st, Scope: "orders"})
//
// Leases do not live in ZooKeeper sessions (ephemeral nodes): a session is the
// client's, not the lease's, it stays alive as long as the connection pings
// whether or not the holder renews, and its timeout is bounded by the server's
// tick. Instead a lease expires TTL after its last write by the clock of the
// ZooKeeper leader that committed it (the node's mtime), judged against a fresh
// write's mtime; a lease last written under an earlier leader is counted from the
// new leader's first write, so the members' clocks need not agree. The nodes are
// persistent: a value's mark survives expiry, release and session loss. Do not
// delete them.
//
// The URL's path is the node prefix; dial_timeout= and request_timeout= set
// [Options].DialTimeout and [Options].RequestTimeout. The nodes, the clock and the
// cost of Acquire on large pools are in docs/leases.md ("ZooKeeper store").
package zkstore
