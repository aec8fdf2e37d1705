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
// What it promises:
//   - A buffered Next is one atomic add: no lock, no allocation, no network. A
//     refill runs in the background when fewer than Options.LowWater IDs remain;
//     Batch and LowWater follow the rate of use when left at zero.
//   - Every ID fetched is handed out at most once; the IDs still buffered at Close
//     are dropped, never handed out later.
//   - While it talks to one server node its IDs strictly increase; across servers
//     they are only k-sorted by time.
//   - A server that fails is passed over with a backoff, and one slower than its
//     hedge delay (10-100 ms) is hedged to the next; a call fails only when every
//     server failed within its context (*Error, matching ErrUnavailable). Refusals
//     another server would repeat return at once (*RefusedError).
//   - ctx bounds the wait for a refill only; a buffered ID ignores it.
//
// docs/client.md has the buffer, the order, failover and hedging in full, with
// the measurements behind the defaults.
package client
