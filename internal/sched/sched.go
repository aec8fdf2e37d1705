// Package sched holds the hooks through which a clock that owns all time, a
// deterministic simulation's (verify/sim), also owns the goroutines, the random
// choices and the channel waits of the lease and segment code that runs on it, so
// that one seed is one history. They are not API: the package is internal, only the
// simulation's clock implements them, and the code that looks for them does so when
// a session or allocator starts a goroutine or picks how long to wait, never on the
// path that issues an ID.
// On any other clock each is the plain behaviour: the go statement, math/rand/v2, a
// wait on the channel.
package sched

import (
	"math/rand/v2"
	"time"
)

// Spawner is implemented by a simulation's clock, which must start every goroutine of
// the code it drives so that it can run them one at a time in an order fixed by its
// seed. Code that starts a background goroutine calls [Go].
type Spawner interface {
	// Go starts f as a goroutine the simulation schedules.
	Go(f func())
}

// Go runs f in a new goroutine: through clk when clk is a simulation's (a Spawner),
// else with the go statement.
func Go(clk any, f func()) {
	if s, ok := clk.(Spawner); ok {
		s.Go(f)
		return
	}
	go f()
}

// Poller is implemented by a simulation's clock. The simulation runs one goroutine
// at a time and sees only waits on its clock, so code that waits on a channel for
// another goroutine polls the channel on the clock instead, every PollEvery, when
// its clock is a Poller.
type Poller interface {
	PollEvery() time.Duration
}

// PollEvery returns how often code on clk polls the channels it waits on: zero
// (wait on them) unless clk is a simulation's.
func PollEvery(clk any) time.Duration {
	if p, ok := clk.(Poller); ok {
		return p.PollEvery()
	}
	return 0
}

// Chooser is implemented by a simulation's clock, whose seeded source makes the
// random choices of the code it drives, so that one seed is one history.
type Chooser interface {
	IntN(n int) int
}

// IntN returns a random number in [0, n): from clk's source when clk is a Chooser,
// else from math/rand/v2.
func IntN(clk any, n int) int {
	if c, ok := clk.(Chooser); ok {
		return c.IntN(n)
	}
	return rand.IntN(n)
}
