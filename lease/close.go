package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/flurryid/flurry/clock"
)

// Ending a session and releasing its lease: Close, and abandon, which releases a
// value claimed but not granted.

// abandon releases a claimed value that will not be granted, with mark, the mark the
// value had when it was claimed. Release is the one write that lowers a mark, and
// lowering it here is safe because nothing was issued under this lease: it undoes a
// reservation the store applied although its reply was lost. It runs even when ctx
// has ended (that may be why the attempt failed), bounded by the TTL as Close's
// release is: past it the lease has expired anyway, and a store that does not answer
// must not hold up Start beyond its context by more than that. A failed release is
// ignored for the same reason.
func (s *Session) abandon(ctx context.Context, l Lease, mark int64) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.opts.Clock, s.opts.TTL)
	defer cancel()
	if !s.dropJournalToken(ctx, l, s.journalMark()) {
		return
	}
	s.opts.Store.Release(ctx, l, mark)
}

// Close ends the session: it stops renewing, stops the generator (ErrLost) and
// releases the lease, keeping its mark, so another process can take the value at
// once. The release is bounded by the TTL: past it the lease has expired anyway.
//
// Close may be called any number of times, from any goroutines at once, and after
// the session ended by itself (Done): every call waits for the first to finish and
// returns its result.
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.closeAndRelease() })
	return s.closeErr
}

// closeAndRelease is Close's one run: it stops the run loop before it revokes the
// generator and releases, so that no renewal or grant comes after the release.
func (s *Session) closeAndRelease() error {
	s.cancel(ErrClosed)
	<-s.stopped // the run loop writes and grants no more
	s.g.Revoke(ErrClosed)
	s.mu.Lock()
	l, held, mark := s.l, s.held, s.mark
	// Release with what the generator really issued, not the whole reservation, so
	// the next holder of the value need not wait for the reservation to pass.
	if it, ok := s.g.(interface{ IssuedThrough() int64 }); ok && held {
		mark = min(mark, max(unixMilli(it.IssuedThrough()), s.above))
	}
	s.held, s.status.Held = false, false
	s.mu.Unlock()
	if !held {
		return nil
	}
	// s.ctx has ended; the release keeps its values, not its end.
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(s.ctx), s.opts.Clock, s.opts.TTL)
	defer cancel()
	// The journal first, without the token and with what the generator really
	// issued: the next process on it starts above that, without waiting for the
	// local mark's lead to pass, and cannot resume a lease this Release may free
	// after it (dropJournalToken). If the Release does not reach the store, the lease
	// expires after the TTL.
	if !s.dropJournalToken(ctx, l, mark) {
		return fmt.Errorf("lease: release %s/%d: the journal cannot be written, so the lease is left to expire", s.scope, l.Value)
	}
	rerr := s.opts.Store.Release(ctx, l, int64(mark))
	if rerr != nil && !errors.Is(rerr, ErrLost) {
		return fmt.Errorf("lease: release %s/%d: %w", s.scope, l.Value, rerr)
	}
	return nil
}
