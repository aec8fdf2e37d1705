// Package fence is the seam between a snowflake generator and the lease session
// that feeds it node values. A managed generator issues IDs only under a [Grant]: a
// node value, a floor above what earlier holders of the value issued, the end of the
// reservation the store holds, and the instant the right ends. Package lease makes
// managed generators and gives them grants through a [Target]; none of this is
// public API, so that package snowflake shows only what its users need.
package fence

import (
	"errors"

	"github.com/flurryid/flurry/layout"
)

// ErrLost means the lease behind a node value is not held: a store's Renew or
// Release found it gone, or a managed generator has no valid grant. Package lease
// exports it as lease.ErrLost.
var ErrLost = errors.New("lease: lease lost")

// Grant gives a managed generator the right to issue IDs for one node value.
type Grant struct {
	// Node is the node value the lease holds.
	Node layout.NodeValues
	// Above is the value's high-water mark left by earlier holders, in Unix
	// milliseconds: the generator issues only in ticks that start after it.
	Above int64
	// Through is the end of the reservation written to the store, in Unix
	// milliseconds: the generator issues only in ticks that start at or before it.
	Through int64
	// Until is when the right ends, in nanoseconds of the generator's clock: at and
	// after it the generator refuses (ErrLost). A session sets it before the lease
	// could expire in the store, with a margin.
	Until int64
}

// Target is the fencing side of a managed generator, as a lease session drives it.
type Target interface {
	// Grant installs or extends the right to issue. For the node value the
	// generator already issues for, it extends Through and Until and raises the
	// floor to Above. For another value, the generator moves to it: IDs from then on
	// carry the new value and start above its mark and above every ID issued before.
	// It fails on a node value that does not fit the layout, and (ErrInUse of
	// package snowflake) on one another generator of this process holds.
	Grant(Grant) error
	// Revoke stops the generator at once: it refuses (ErrLost, with cause in the
	// message) until the next Grant.
	Revoke(cause error)
	// IssuedThrough returns, in Unix milliseconds, the start of the latest tick in
	// which the generator may have issued for its current node value, counting calls
	// already past the fence when it was revoked: the mark to release the value with.
	IssuedThrough() int64
}

// The hooks through which package lease reaches managed generators. Package
// snowflake sets them in its init, which runs before the code of any package that
// imports snowflake, lease among them; nothing writes them afterwards.
var (
	// NewManaged makes a managed generator from a snowflake.Options: one that takes
	// its node value from its Target's grants and issues nothing before the first.
	// It returns a *snowflake.Generator.
	NewManaged func(opts any) (gen any, err error)
	// TargetOf returns the Target of a managed *snowflake.Generator, and nil for
	// anything else.
	TargetOf func(gen any) Target
)
