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
// # Buffer
//
// Each namespace has a buffer of IDs fetched Options.Batch at a time. When fewer
// than Options.LowWater remain, one refill request starts in the background (never
// two at once for one namespace; a hedged one asks a second server and keeps one
// answer), so a caller waits only when IDs are used faster
// than one request brings them. Left at zero, both follow the measured rate of
// use: requests grow up to 100,000 IDs and the buffer is kept several round trips
// ahead (see Options). Next on a buffered ID is one atomic add on the
// current batch: it takes no lock, does not allocate and does not touch the network.
//
// Every ID fetched is handed out at most once. On Close, IDs still buffered are
// dropped: they are lost, never returned later or twice (a Next racing with Close
// may still return one of them). A flurry ID carries the time it was made, so a
// buffered ID is as old as its batch: keep Batch small enough that a batch lasts
// seconds, not hours, if IDs must be close to the time of use.
//
// # Order
//
// IDs come out of a namespace's buffer in the order they were received, and
// batches are received in the order they were asked for (one refill in flight).
// A server's integer batches are increasing (the client refuses a batch that is
// not), and one server node issues increasing IDs across its batches, so while the
// client keeps talking to one server node, its IDs strictly increase. After a
// failover to another server (a hedge it answered is one), or behind a load
// balancer spreading requests over several nodes, IDs are only trend-increasing
// (k-sorted by time: another node's clock), and a segment namespace with several
// stores hands out interleaved ranges. Never rely on a client's IDs being
// increasing across servers.
//
// # Failover
//
// Servers are tried in order, starting from the last one that answered. A server
// that fails (refused connection, reset, no answer within Options.Timeout, or an
// UNAVAILABLE answer because its namespace is exhausted, fenced or its store is
// down) is passed over for a backoff that doubles with each failure in a row, from
// Options.Backoff up to Options.MaxBackoff, with jitter. Servers in backoff are
// still tried, last, when all others failed or are slow. A call returns an error only when
// every server failed within its context: a *Error listing each attempt, which
// matches ErrUnavailable.
//
// # Hedging
//
// A request that its server has not answered within the server's hedge delay is
// also sent to the next server (a hedge), so a server that died or was cut off
// without a reset costs a caller that delay, not Options.Timeout. The first answer
// is used; the other requests are cancelled and their IDs dropped, never handed
// out. The hedge delay is the 95th percentile of the server's last 64 successful
// round trips, within Options.HedgeMinDelay and HedgeMaxDelay (10ms and 100ms by
// default). A server out-hedged is passed over as a failed one is, so it costs
// the delay once, not on every call. Refills, Fetch, Decode and Info are all
// hedged; Options.NoHedge turns hedging off, and Client.Stats counts the hedges
// sent and won per server.
//
// Refusals that another server would repeat are returned at once, without
// failover, as a *RefusedError matching ErrUnknownNamespace, ErrUnauthenticated,
// ErrInvalidArgument or ErrWrongKind.
//
// # Contexts
//
// ctx bounds the wait for a refill: when it ends, Next returns an error wrapping
// ctx's cause, and the refill goes on in the background, its IDs kept for later
// calls. A buffered ID is returned without looking at ctx.
//
// # Transports
//
// HTTP (the default) speaks the Connect protocol, binary Protobuf in HTTP/1.1 POSTs
// over keep-alive connections; GRPC speaks gRPC over HTTP/2, cleartext (h2c) for
// http:// servers. Both reach the same IDService of `flurry serve`.
package client
