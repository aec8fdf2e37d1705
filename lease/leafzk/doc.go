// Package leafzk keeps node-value leases in Meituan Leaf's own ZooKeeper
// registry, so that flurry servers replace Leaf's snowflake servers in place and
// run beside them in one worker space.
//
//	o, err := leafzk.ParseURL("leafzk://zk1:2181,zk2:2181/com.example.leaf?addr=10.0.0.5:8080")
//	st, err := leafzk.Open(ctx, o)
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: leafLayout, Start: snowflake.StartRandom},
//		lease.Options{Store: st, Journal: journal})
//
// The store reads and writes Leaf's registry (/snowflake/{leaf.name}/forever) as a
// Leaf server does, and keeps what Leaf has no place for (holder, expiry, mark) in
// nodes of its own beside it. It takes a worker ID's node only when no Leaf
// server writes it (left alone for Fresh, by ZooKeeper's clock) and none answers
// at its address (the probe; NoProbe turns it off); it starts above a Leaf
// server's last timestamp plus Margin; every renewal writes the node's timestamp
// as Leaf would, in one transaction with the lease, so a Leaf server started on
// the node stops flurry's renewal. Open fails while ZooKeeper is unreachable.
// What each step covers, and what it cannot see (a Leaf server on another port,
// behind a firewall, or on a copied workerID.properties), is in docs/leafzk.md.
package leafzk
