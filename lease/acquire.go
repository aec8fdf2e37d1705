package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flurryid/flurry/layout"
)

// Acquiring a lease: claim a value in the store, find the mark to start above,
// write the journal, reserve, grant, and record the lease as held; retried with a
// growing back-off until it holds or the attempt's context ends. Resuming the
// journal's lease instead is in resume.go.

// acquire loops until a lease is held and granted. It returns at once, wrapped, an
// error that retrying cannot cure (permanent); ErrClosed when the session was closed;
// and when ctx ends, an error that wraps both ctx's error and the last failure.
func (s *Session) acquire(ctx context.Context) error {
	backoff := 50 * time.Millisecond
	var last error // the last failure, not counting an attempt that ctx's end cut short
	var lastMsg string
	for {
		err := s.tryAcquire(ctx)
		if err == nil {
			return nil
		}
		if s.ctx.Err() != nil {
			return ErrClosed
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		s.recordFailure(err)
		if permanent(err) {
			return fmt.Errorf("lease: acquiring a node value in scope %s: %w", s.scope, err)
		}
		if errors.Is(err, ErrJournal) {
			// The generator holds no grant: its refusals say why.
			s.g.Revoke(err)
		}
		if ctx.Err() == nil {
			// Log once per kind of failure, not on every retry.
			if msg := err.Error(); msg != lastMsg {
				lastMsg = msg
				if errors.Is(err, ErrNoFreeValue) {
					s.log.Warn("lease: every node value is held; waiting for one", "scope", s.scope, "size", s.size, "reason", err)
				} else {
					s.log.Warn("lease: acquire failed; retrying", "scope", s.scope, "err", err)
				}
			}
		}
		if werr := s.sleep(ctx, jitter(s.opts.Clock, backoff)); werr != nil {
			if s.ctx.Err() != nil {
				return ErrClosed
			}
			return fmt.Errorf("lease: no node value acquired in scope %s: %w; last error: %w", s.scope, werr, last)
		}
		backoff = min(backoff*2, maxRetry)
	}
}

// tryAcquire makes one attempt to hold a value, in steps: claim a value, find the
// mark to start above (startAbove), reserve a window in the store, grant the
// generator that window, and record the lease (recordHeld). The order is the protocol's
// (docs/correctness.md, steps 1 and 2): nothing is granted before the store has
// confirmed the reservation, so that at every moment the store's mark is at or above
// every tick the generator may issue in, and a holder that takes the value after a
// crash starts above all of them. When a step after the claim fails, the value is
// released again (abandon).
//
// The clock is read once, right before the reservation is written: that reading
// (sent) is both where the reservation is measured from and where the grant's fence
// is (see fenceEnd).
func (s *Session) tryAcquire(ctx context.Context) error {
	if s.resume != nil {
		err := s.tryResume(ctx)
		if !errors.Is(err, ErrLost) {
			return err // resumed, or the store did not answer: try again
		}
		// The predecessor's lease expired, another holder has the value, or the
		// journal is a copy (tryResume logged which): acquire as usual, still above
		// the journal's mark.
		s.resume = nil
	}
	l, err := s.claim(ctx)
	if err != nil {
		return err
	}
	above, err := s.startAbove(ctx, l)
	if err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	// Above what this journal's earlier processes issued, whatever value they had:
	// a restart after a crash on a clock that stepped back continues above them.
	// Not above this process's own journal writes: each failed attempt wrote one
	// two intervals ahead, and retries would run the start ahead of the clock.
	above = max(above, s.jfloor)
	sent := s.opts.Clock.Now()
	// At acquisition the store's mark for this lease is the one the holder starts
	// above: reservation(above, above, ...) is max(above, now) + reservationLead.
	mark := reservation(above, above, sent, s.reservationLead())
	if err := s.writeJournal(ctx, l, l.Epoch+1, above, sent); err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	node := s.nodeOf(l.Value)
	l2, err := s.reserve(ctx, l, node, above, mark, sent)
	if err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	until := s.fenceEnd(sent)
	if err := s.grant(node, above, s.grantThrough(mark), until); err != nil {
		s.abandon(ctx, l2, l.Mark)
		return refused(err)
	}
	s.recordHeld(l2, node, above, mark, until, false)
	return nil
}

// claim asks the store for a value and a fresh lease on it: the configured value
// (Options.Fixed) or any free one of the pool. The store does this atomically: no
// live lease holds the value it gives, and the lease comes with the value's mark.
func (s *Session) claim(ctx context.Context) (Lease, error) {
	if s.opts.Fixed != nil {
		// In the pool's own scope: a configured holder and a pool holder can never
		// share the value, and they share its mark.
		return s.opts.Store.AcquireValue(ctx, s.scope, *s.opts.Fixed, s.opts.Owner, s.opts.TTL)
	}
	if s.opts.Prefer != nil {
		l, err := s.opts.Store.AcquireValue(ctx, s.scope, int64(*s.opts.Prefer%uint64(min(s.size, 1<<22))), s.opts.Owner, s.opts.TTL)
		if !errors.Is(err, ErrNoFreeValue) {
			return l, err
		}
	}
	return s.opts.Store.Acquire(ctx, s.scope, s.size, s.opts.Owner, s.opts.TTL)
}

// startAbove returns the mark the holder of l starts above. The value's own mark is at or
// above every tick any earlier holder of the value issued or may still issue in: they
// all reserved before issuing, and a release lowers the mark only to what its holder
// issued. With OrderScope it is also above the marks of the scope's values that no
// live lease holds (see Order), so a restart on a slower clock does not issue below
// IDs of the scope's ended leases.
func (s *Session) startAbove(ctx context.Context, l Lease) (unixMilli, error) {
	above := unixMilli(l.Mark)
	if s.opts.Order == OrderScope {
		m, err := scopeMark(ctx, s.opts.Store, s.scope, l.Value)
		if err != nil {
			return 0, err
		}
		above = max(above, m)
	}
	return above, nil
}

// recordHeld records a lease that was reserved and granted, for renew and Status,
// and logs it; resumed says it was the journal's.
func (s *Session) recordHeld(l Lease, node layout.NodeValues, above, mark unixMilli, until int64, resumed bool) {
	s.mu.Lock()
	s.l, s.held, s.above, s.mark, s.until = l, true, above, mark, until
	s.status.Held, s.status.Value, s.status.Node = true, l.Value, node
	s.status.NodeText = s.opts.Layout.FormatNodeValues(node)
	s.status.Resumed = resumed
	s.status.Renewed = time.Unix(0, s.opts.Clock.Now()).UTC()
	s.mu.Unlock()
	msg := "lease: acquired node value"
	if resumed {
		msg = "lease: resumed the journal's lease after an unclean stop"
	}
	s.log.Info(msg, "scope", s.scope, "value", l.Value, "node", s.status.NodeText,
		"above", above.time(), "order", s.opts.Order, "owner", s.opts.Owner, "budget", s.opts.Budget, "ttl", s.opts.TTL)
}
