// Package checker judges what the clients of a fault-harness run received: every
// request each client made, the node it went to, when it was sent and answered,
// and the IDs that came back (or the class of error). It checks flurry's promise
// over all of it, exactly:
//
//   - Duplicates: no ID twice in one namespace, across all clients, nodes, ops and
//     restarts. IDs are collected per namespace, sorted and scanned, with no map:
//     the checker keeps 8 bytes per ID and 56 per op, and Check adds a sorted
//     copy of one namespace's IDs at a time. Measured: 120M IDs in two
//     namespaces (120k ops), 2.0 GB peak RSS, Check 32 s on a shared 2-core
//     machine (CHECKER_VOLUME=60000000 go test -run TestVolume -v).
//   - Range: a snowflake or redis ID decomposes in its namespace's layout (positive,
//     no bit above the layout's width, so the time and node fields are inside their
//     fields); optionally its time is not far ahead of when it was received
//     ([Namespace.MaxAhead]). A segment ID is positive.
//   - Order: inside one op the IDs strictly increase. Across ops to the same
//     (namespace, node): when op A was answered before op B was sent, every ID of A
//     is below every ID of B (real-time order; a sweep by time, not all pairs).
//     For a client that buffers IDs, B counts from when its IDs were asked of the
//     node ([Op.Asked]), not from when they were handed out.
//     For snowflake and redis namespaces this holds across the node's restarts
//     (flurry's "monotonic per node, also across restarts"). For segment
//     namespaces it holds per process lifetime only (docs/segments.md: one
//     allocator's IDs strictly increase; a restarted process claims handed-back
//     ranges first, lowest first, so it may continue below what it issued
//     before); [Checker.Restarted] events split the lifetimes, and an op that
//     spans a restart is compared with no other op.
//   - Availability: the fraction of requests answered, and the longest interval in
//     which no op to any node of a namespace delivered an ID (the gap), overall and
//     inside each fault window. Ops marked [Op.NoAvailability] (probes, a buffering
//     client's grouped calls) are checked but left out of these figures.
//
// Every count comes with up to [MaxExamples] concrete examples (IDs and ops) per
// kind of anomaly and namespace. [WriteMarkdown] writes the tables of
// docs/reliability.md, and [Checker.Throughput] the IDs/s series for its plot.
package checker
