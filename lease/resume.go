package lease

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Resuming a crashed predecessor's lease from the Journal.
//
// A journal file can be copied: a data directory provisioned with cp -a, a cloned
// virtual machine or volume, an image with a data directory baked in. It can be
// restored from a backup or a reverted snapshot, and so lag behind the store. Each
// copy names the same lease (token) and a local mark that the other copies, and
// the original if it still runs, know nothing of. So resuming is a compare-and-swap
// in the store (Store.Takeover) that retires the journal's token: of all the
// processes started from copies of one journal, at most one gets the lease, and the
// holder the token named, if it still runs, fails its next renewal (ErrLost) and
// stops. And the journal's mark is trusted only when the journal is this host's own
// file, as its predecessor left it: not copied (JournalEntry.Copied) and not behind
// the store (the epoch). Otherwise the session starts above the store's mark, the
// reservation of the holder it took over from, which that holder never issued
// above.

// loadJournal reads the Journal, if any. Its mark, when of this scope, is a floor
// for every acquisition of the session (journalMark); a lease it holds is one the
// session tries to resume first.
func (s *Session) loadJournal(ctx context.Context) error {
	if s.opts.Journal == nil {
		return nil
	}
	e, err := s.opts.Journal.Load(ctx)
	if err != nil {
		return &configError{msg: err.Error(), err: err}
	}
	if e.Scope != s.scope {
		if e.Scope != "" {
			s.log.Warn("lease: the journal is of another scope; starting without it", "journal_scope", e.Scope, "scope", s.scope)
		}
		return nil
	}
	s.jmark, s.jfloor = unixMilli(e.Mark), unixMilli(e.Mark)
	if e.Token != "" && (s.opts.Fixed == nil || *s.opts.Fixed == e.Value) && e.Value < s.size {
		s.resume = &e
	}
	return nil
}

// errNotResumed is returned by tryResume when the journal's lease is not to be
// resumed, without asking the store: it wraps ErrLost, so the session acquires as
// usual.
var errNotResumed = fmt.Errorf("%w: the journal is a copy; its lease is left to the process it was copied from", ErrLost)

// tryResume takes over the lease of the journal's entry, which the process that
// ran on the journal before held when it ended without a release (a crash, a
// kill), or which the process a copied journal came from holds or held.
//
// A pool value of a copied journal is not taken over at all: another free value
// is as good, and takes nothing from the original if it still runs. Otherwise the
// session takes the lease over (Takeover): the store retires the journal's token,
// so no other copy of the journal can resume it, and its old holder, if it still
// runs, cannot renew it.
//
// Then, when the journal is this host's own file as its predecessor left it (not
// Copied, and the store's epoch before the takeover at or below the journal's),
// the predecessor issued nothing above the journal's mark (it wrote the mark
// before each grant), and every earlier holder of the value issued below the
// predecessor's floor, which is below that mark too: so the session starts above
// the journal's mark, not above the store's, which is the predecessor's whole
// reservation, up to the outage budget ahead of its clock; a restart is granted at
// once. Otherwise it starts above the store's mark as the takeover found it: the
// old holder's reservation, which it never issued above, also while it ran on
// beside this copy until its next renewal failed. It returns an error wrapping
// ErrLost when the lease is gone, or not to be resumed.
func (s *Session) tryResume(ctx context.Context) error {
	e := s.resume
	if e.Copied && s.opts.Fixed == nil {
		// Uniqueness needs nothing more: another value. Order does: a journal
		// restored from a backup, or a reverted snapshot whose clock is behind,
		// has a mark below what this node issued since, so the new value starts
		// above what the journal's value was last renewed for instead.
		floor, err := s.renewedFor(ctx, e.Value)
		if err != nil {
			return err
		}
		s.jfloor = max(s.jfloor, floor)
		s.log.Warn("lease: the journal was copied or restored from another file or host, or the host rebooted, and its lease may be its original's: acquiring another node value",
			"scope", s.scope, "journal_value", e.Value, "above", s.jfloor.time())
		return errNotResumed
	}
	old := Lease{Scope: e.Scope, Value: e.Value, Owner: e.Owner, Token: e.Token}
	above := unixMilli(e.Mark)
	if s.opts.Order == OrderScope {
		m, err := scopeMark(ctx, s.opts.Store, s.scope, old.Value)
		if err != nil {
			return err
		}
		above = max(above, m)
	}
	sent := s.opts.Clock.Now()
	mark := reservation(above, above, sent, s.reservationLead())
	l, err := s.opts.Store.Takeover(ctx, old, s.opts.Owner, s.opts.TTL, int64(mark))
	if err != nil {
		if isLost(err) {
			if e.Copied {
				s.log.Warn("lease: the journal was copied or restored, and its lease is gone or another copy took it over; waiting for the node value",
					"scope", s.scope, "value", e.Value)
			} else {
				s.log.Info("lease: the lease in the journal is gone; acquiring a node value", "scope", s.scope, "value", e.Value)
			}
		}
		return err
	}
	node := s.nodeOf(l.Value)
	trusted := !e.Copied && l.Epoch-1 <= e.Epoch
	raise := false
	if !trusted {
		// The store's mark, before the takeover raised it, is the old holder's
		// reservation: it issued nothing above it.
		if m := unixMilli(l.Mark); m > above {
			above, raise = m, true
			mark = reservation(above, above, sent, s.reservationLead())
		}
		why := "the journal was copied or restored from another file or host, or the host rebooted"
		if !e.Copied {
			why = "the journal is behind the lease store (restored from a backup or a reverted snapshot)"
		}
		s.log.Warn("lease: "+why+", so its mark is not trusted: starting above the lease store's reservation instead, which may mean waiting for the clock to pass it",
			"scope", s.scope, "value", l.Value, "above", above.time(), "wait", max(time.Duration(above.ns()-s.opts.Clock.Now()), 0).Round(time.Millisecond),
			"journal_epoch", e.Epoch, "store_epoch", l.Epoch)
	}
	// From here the lease is this session's: a failure leaves it to the next
	// attempt, which takes it over again (not trusting the old journal more than
	// this attempt did).
	s.resume = &JournalEntry{Scope: e.Scope, Value: l.Value, Owner: l.Owner, Token: l.Token, Mark: int64(above), Epoch: l.Epoch, Copied: e.Copied}
	if err := s.writeJournal(ctx, l, l.Epoch+1, above, sent); err != nil {
		return err
	}
	if raise {
		if l, err = s.reserve(ctx, l, node, above, mark, sent); err != nil {
			return err
		}
	}
	until := s.fenceEnd(sent)
	if err := s.grant(node, above, s.grantThrough(mark), until); err != nil {
		// Keep the lease for the next attempt; an error Grant returns is one
		// retrying cannot cure, and Close or expiry ends the lease.
		return refused(err)
	}
	s.resume = nil
	s.recordHeld(l, node, above, mark, until, true)
	return nil
}

// renewedFor returns how far the holder of value, as of its last renewal, may have
// issued: its reservation in the store less the part of it that covers an outage
// (the budget and one interval), plus the lead of its journal (two intervals).
// Without a store outage before it ended, that holder issued nothing above it; it
// is a floor for order, not for uniqueness (the session takes another value). 0
// when the value has no record.
func (s *Session) renewedFor(ctx context.Context, value int64) (unixMilli, error) {
	recs, err := s.opts.Store.List(ctx, s.scope)
	if err != nil {
		return 0, fmt.Errorf("lease: reading the mark of the journal's value %d of scope %s: %w", value, s.scope, err)
	}
	for _, r := range recs {
		if r.Value == value && r.Mark > 0 {
			return max(unixMilli(r.Mark)-unixMilli((s.reservationLead()-s.journalLead()).Milliseconds()), 0), nil
		}
	}
	return 0, nil
}

// isLost reports whether err says the lease is not the caller's (ErrLost).
func isLost(err error) bool { return errors.Is(err, ErrLost) }
