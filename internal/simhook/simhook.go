// Package simhook holds the hooks through which the deterministic simulation
// (verify/sim) drives flurry's real lease and segment code. They are not API: the
// package is internal, only the simulation's clock and stores implement them, and the
// code that looks for them does so once, when a session or allocator starts, never on
// the path that issues an ID.
package simhook

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

// Flaw names a known-bad variant of the lease protocol. The simulation runs the real
// session with one switched on to show that its checker catches it; production code
// never sees one, because only the simulation's store reports any.
type Flaw uint8

const (
	// FenceFromReply measures the grant's end (Grant.Until) from the renewal's reply
	// instead of its send: a slow reply stretches the fence past the store's expiry.
	FenceFromReply Flaw = 1 << iota
	// GrantBeforeReserve grants the generator a window before the store has the
	// reservation (the mark) for it.
	GrantBeforeReserve
	// AboveWithoutPlusOne lets a new holder issue in the tick of the mark earlier
	// holders left instead of strictly after it.
	AboveWithoutPlusOne
	// GrantBeforeJournal lets the generator issue through a new journal mark before
	// the journal has it: a crash before the write leaves the successor a mark
	// below IDs the crashed run issued.
	GrantBeforeJournal
	// StaleRelease sends a Release while the journal still names its lease (an
	// abandoned acquisition, and Close, which writes the journal after the
	// Release): a Release still on its way when the process crashes can free the
	// lease after a successor resumed it from the journal.
	StaleRelease
	// PastBudget bounds the generator by the journal's mark only, not by the
	// store's reservation: through a long outage it issues past what the store
	// holds.
	PastBudget
)

// Flawed is implemented by a simulation's store that asks the session using it to run
// known-bad variants of the protocol.
type Flawed interface {
	SimFlaws() Flaw
}

// FlawsOf returns the flaws a store asks for: none unless it is a simulation's.
func FlawsOf(store any) Flaw {
	if f, ok := store.(Flawed); ok {
		return f.SimFlaws()
	}
	return 0
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
