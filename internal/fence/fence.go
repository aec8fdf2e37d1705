// Package fence is the seam between a snowflake generator and the lease session
// that feeds it node values. A managed generator issues IDs only under a [Grant]: a
// node value, a floor above what earlier holders of the value issued, the end of the
// reservation the store holds, and the instant the right ends. Package lease makes
// managed generators and gives them grants through a [Target]; none of this is
// public API, so that package snowflake shows only what its users need.
//
// The link is typed and holds no package state. Package lease makes a [Fence] with
// [New] and passes it to snowflake.New in Options.Fence; the generator that takes it
// is managed and attaches its Target to it ([Attach]). The generator embeds its
// Fence, whose unexported method makes a *snowflake.Generator a [Holder], so that
// [TargetOf] finds the Target of a generator the compiler knows to be one. A Fence
// has no exported fields or methods: embedding it adds nothing a user could call.
package fence

import "errors"

// NodeValues holds a node value's fields in layout order, as layout.NodeValues
// does; it is the same array type, so the two convert without a copy and a
// change of layout.MaxNodeFields breaks the build of snowflake and lease instead
// of this package importing layout (the helpers sit below every other layer).
type NodeValues = [8]int64

// ErrLost means the lease behind a node value is not held: a store's Renew or
// Release found it gone, or a managed generator has no valid grant. Package lease
// exports it as lease.ErrLost.
var ErrLost = errors.New("lease: lease lost")

// ErrJournal means a lease session's journal cannot be written (a full disk, a
// read-only or failing file system). Package lease exports it as lease.ErrJournal;
// a managed generator's refusal wraps it, with the file system's error, when its
// grant ran out because of it.
var ErrJournal = errors.New("lease: the journal cannot be written")

// Grant gives a managed generator the right to issue IDs for one node value.
type Grant struct {
	// Node is the node value the lease holds.
	Node NodeValues
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
	// Cause, when set, is why Through may end before the store's reservation: the
	// session's journal cannot be written (it wraps ErrJournal). The generator's
	// refusals name it, and wrap it, until a grant without one.
	Cause error
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

// Fence links one managed generator to the lease sessions that feed it. Only New
// makes a usable one: a zero Fence (which code outside this module can make, by
// type inference, though it cannot name the type) is refused by Attach.
type Fence struct {
	made   bool   // by New
	target Target // set once, by Attach
}

// New returns a Fence for one managed generator.
func New() *Fence { return &Fence{made: true} }

// Attach links f to t, the Target of the generator that took f in its options. It
// reports false, and links nothing, when f is nil, was not made by New, or is
// linked already: a generator made from such a Fence must be refused.
func Attach(f *Fence, t Target) bool {
	if f == nil || !f.made || f.target != nil || t == nil {
		return false
	}
	f.target = t
	return true
}

// Holder is a generator that embeds a *Fence: a *snowflake.Generator, nil Fence
// and all. Its one method is unexported, so only embedding a Fence satisfies it.
type Holder interface{ fence() *Fence }

func (f *Fence) fence() *Fence { return f }

// TargetOf returns the Target of h's Fence: nil for a generator made without one
// (snowflake.New with Options.Fence nil), which no lease may feed. h must not be a
// nil pointer.
func TargetOf(h Holder) Target {
	if f := h.fence(); f != nil {
		return f.target
	}
	return nil
}
