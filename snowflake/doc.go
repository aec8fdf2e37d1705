// Package snowflake issues time-ordered 63-bit IDs in process, for any bit layout of
// package layout.
//
// A [Generator] owns one node value of a layout and issues IDs whose time field is
// the tick read from its clock, whose node fields are its node value and whose
// sequence field tells apart the IDs of one tick:
//
//	g, err := snowflake.New(snowflake.Options{Layout: l, Node: layout.NodeValues{1, 3}})
//	id, err := g.Next(ctx)
//
// A call allocates nothing and never spins; docs/generator.md has how a call works
// and when a lane takes its mutex. What it does at the edges is set by [Options]:
//
//   - a tick's sequence runs out: [Wait] sleeps until the next tick (never a busy
//     spin); [Borrow] takes future ticks up to MaxDrift ahead of the clock;
//   - the clock stands behind the last issued tick: a gap up to WaitThreshold is
//     slept off; beyond it [Fail] returns a *ClockBehindError, [Logical] keeps issuing
//     up to MaxDrift ahead, and [SwitchNode] moves to a Standby node value;
//   - the time field runs out: [ErrExhausted], never a wrapped or negative ID, with
//     OnLifeLow called once a configured span before;
//   - a second live generator for the same namespace, layout shape and node value in
//     one process: New returns [ErrInUse], since two instances of one node would
//     issue the same IDs.
//
// Per-goroutine [Lane]s split the sequence space for throughput that grows with
// cores, at the price of ordering inside a tick; a [Pool] hands out IDs made ahead of
// time for bursts above the per-tick cap.
//
// A generator is unique only among generators that hold different node values:
// across processes and machines, node values must come from configuration or a lease
// that gives each holder its own.
package snowflake
