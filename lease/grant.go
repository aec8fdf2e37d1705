package lease

import (
	"context"
	"time"

	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/layout"
)

// The two steps every acquisition, resume and renewal makes in this order: reserve
// ticks in the store, then grant the generator the right to issue in them, until a
// fence that ends before the store's expiry of the lease.

// grantThrough is what the generator may issue through, given the store's
// reservation mark: the earlier of it and the Journal's mark, so that a crash never
// leaves IDs above the mark the next process on the journal starts above.
func (s *Session) grantThrough(mark unixMilli) unixMilli {
	if s.opts.Journal == nil {
		return mark
	}
	if s.steps.Through != nil {
		return unixMilli(s.steps.Through(int64(mark), int64(s.journalMark())))
	}
	return min(mark, s.journalMark())
}

// reserve writes mark to the store under l: the first step of every acquisition and
// renewal, before the generator may issue through mark (grant). The store raises the
// value's mark only while l is its live lease (the token), so a holder that lost its
// lease cannot reserve, nor be granted, any further. It returns l with its new
// expiry, or the store's error (ErrLost when l is no longer live). The steps a
// simulation's store hands over (leasestep.Steps.Reserve) may run the write
// another way, given the grant the session makes once it succeeded.
func (s *Session) reserve(ctx context.Context, l Lease, node layout.NodeValues, above, mark unixMilli, sent int64) (Lease, error) {
	if s.steps.Reserve == nil {
		return s.opts.Store.Renew(ctx, l, s.opts.TTL, int64(mark))
	}
	var out Lease
	err := s.steps.Reserve(func() (err error) {
		out, err = s.opts.Store.Renew(ctx, l, s.opts.TTL, int64(mark))
		return err
	}, func() { s.grant(node, above, s.grantThrough(mark), s.fenceEnd(sent)) })
	return out, err
}

// grant gives the generator the right to issue for node in the ticks that start
// after above and at or before through, until its clock reads until. It is the
// session's one call of fence.Target.Grant.
func (s *Session) grant(node layout.NodeValues, above, through unixMilli, until int64) error {
	s.mu.Lock()
	cause := s.jerr
	s.mu.Unlock()
	return s.g.Grant(fence.Grant{Node: node, Above: int64(above), Through: int64(through), Until: until, Cause: cause})
}

// regrant grants the generator again the lease the session holds, through the
// journal's mark as it is now: after a journal write, before the store write it
// precedes. It does nothing while the session holds no lease.
func (s *Session) regrant() error {
	s.mu.Lock()
	node, above, mark, until, held := s.status.Node, s.above, s.mark, s.until, s.held
	s.mu.Unlock()
	if !held {
		return nil
	}
	return s.grant(node, above, s.grantThrough(mark), until)
}

// fenceEnd returns the end of a grant whose reservation was sent when the clock read
// sent: TTL minus the margin after the send. The store sets the lease's expiry to its
// commit time plus TTL, and the commit comes after the send, so a grant counted from
// the send ends before the expiry however slow the reply: the delay only shortens the
// grant. The margin covers the rate error between the store's clock and this one and
// a pause between a generator's clock reading and its ID (docs/correctness.md,
// "Assumptions").
func (s *Session) fenceEnd(sent int64) int64 {
	start := sent
	if s.steps.FenceFrom != nil {
		start = s.steps.FenceFrom(sent)
	}
	return start + int64(s.opts.TTL-s.margin)
}

// reservationLead is how far beyond the clock a reservation reaches: the outage
// budget plus the renewal interval, so that when a renewal is due, and the store
// stops answering then, a whole budget of reservation is left (Options.Budget).
func (s *Session) reservationLead() time.Duration { return s.opts.Budget + s.every }
