// Package leasestep is the seam through which the simulation (verify/sim) runs
// known-bad variants of steps of the lease session, to show that its checker
// catches each one. The zero Steps is the protocol; a session runs other steps only
// when its store hands them over (Source), which only the simulation's store does.
// The variants themselves live in the simulation, not here and not in package
// lease: what the session has is the list of its steps that one may replace.
//
// The session looks for a Source once, when it starts; the path that issues an ID
// never sees one.
package leasestep

// Steps replaces steps of the lease protocol. Each nil field is the protocol's own
// step, so the zero Steps is the protocol.
type Steps struct {
	// FenceFrom returns the clock reading a grant's fence (its end, TTL minus the
	// margin later) counts from, given the reading taken right before the write of
	// the reservation was sent. Nil: that reading, so that a slow reply only
	// shortens the grant.
	FenceFrom func(sent int64) int64
	// Through returns the last tick (Unix milliseconds) a session with a journal
	// lets the generator issue in, given the store's reservation and the journal's
	// mark. Nil: the earlier of the two.
	Through func(reserved, journal int64) int64
	// Reserve runs the store write of a reservation (write). grant grants the
	// generator the reservation, as the session does once that write succeeded.
	// Nil: write alone; the session grants after it.
	Reserve func(write func() error, grant func()) error
	// Journal runs the journal write of a new local mark (save). grant lets the
	// generator issue through that mark, as the session does once the write
	// succeeded. Nil: save alone.
	Journal func(save func() error, grant func()) error
}

// Source is implemented by a store that hands the sessions using it other steps
// than the protocol's: the simulation's.
type Source interface {
	LeaseSteps() Steps
}

// Of returns the steps store hands over: the zero Steps, the protocol, unless
// store is a Source.
func Of(store any) Steps {
	if s, ok := store.(Source); ok {
		return s.LeaseSteps()
	}
	return Steps{}
}
