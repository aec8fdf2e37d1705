// Package client is the Go client of flurry servers (`flurry serve`): it hands out
// IDs from a buffer per namespace that it fills in batches ahead of need (tinyid's
// client idea), so that Next is an in-process call most of the time, and it fails
// over between several servers.
//
//	c, err := client.New(client.Options{
//		Servers: []string{"http://10.0.0.1:8080", "http://10.0.0.2:8080"},
//		Token:   os.Getenv("FLURRY_TOKEN"),
//	})
//	if err != nil { ... }
//	defer c.Close()
//	id, err := c.Next(ctx, "orders")          // flurry.ID
//	ns := c.Namespace("orders")              // a handle: no lookup by name
//	id, err = ns.Next(ctx)
//
// A buffered Next is one atomic add: no lock, no allocation, no network. Every ID
// fetched is handed out at most once (those still buffered at Close are dropped);
// while the client talks to one server node its IDs strictly increase, across
// servers they are only k-sorted by time. A server that fails is passed over with
// a backoff, and one slower than its hedge delay (10-100 ms) is hedged to the
// next; a call fails only when every server failed within its context (*Error,
// matching ErrUnavailable). docs/client.md has the buffer's sizing, the order,
// failover and hedging in full.
package client
