package segment

import "context"

// StoreIdentity names the data a segment store keeps, so that servers can tell
// whether they take ranges from one store (and so never take one value twice) or
// from different ones (and so may).
type StoreIdentity struct {
	// ID is equal for two processes that use one store and differs between
	// stores: the database server's own identifier with the database and table,
	// a random value the store keeps, or a cluster's ID. It holds no password.
	ID string
	// Private reports that only this process can use the store: the embedded file
	// store in a server's data directory, or one in memory. Two servers, each
	// with a store of its own, both hand out 1, 2, 3, ...
	Private bool
}

// Identifier is implemented by segment stores that can name their data. It is
// optional, found by a type assertion; every store of flurry's implements it.
type Identifier interface {
	// Identity returns the store's identity. It may ask the store (one round
	// trip) and write a random identity into it the first time.
	Identity(ctx context.Context) (StoreIdentity, error)
}
