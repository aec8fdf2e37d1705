package lease

import (
	"context"
	"fmt"
	"time"
)

// The session's writes to its Journal: a local mark written before each store
// write and grant, and the token taken out before a Release. Reading the journal
// and resuming its lease are in resume.go.

// journalMark returns the Journal's mark this session wrote or loaded (0 without a
// journal).
func (s *Session) journalMark() unixMilli {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jmark
}

// writeJournal writes l, epoch (the epoch of the store write that follows it,
// under l: Lease.Epoch+1) and a local mark reaching journalLead beyond
// max(above, sent) to the Journal, before that store write and before a grant may
// let the generator issue up to the mark. It writes before every store write, so
// that the journal's epoch names each one: a journal found behind the store's
// epoch after a crash was restored or copied, not left by this session
// (tryResume). It returns an error wrapping ErrJournal and the Journal's error,
// which the generator's refusals name until a write succeeds; without a journal it
// does nothing. The steps a simulation's store hands over
// (leasestep.Steps.Journal) may run the write another way, given what the session
// does once it succeeded.
func (s *Session) writeJournal(ctx context.Context, l Lease, epoch int64, above unixMilli, sent int64) error {
	if s.opts.Journal == nil {
		return nil
	}
	m := reservation(s.journalMark(), above, sent, s.journalLead())
	e := JournalEntry{Scope: s.scope, Value: l.Value, Token: l.Token, Owner: l.Owner, Mark: int64(m), Epoch: epoch}
	var err error
	if s.steps.Journal == nil {
		err = s.opts.Journal.Save(ctx, e)
	} else {
		// What the session does once the write succeeded, for a step that runs it
		// before: the journal's mark is m, and the generator may issue through it.
		granted := func() {
			s.mu.Lock()
			s.jmark = m
			s.mu.Unlock()
			s.regrant()
		}
		err = s.steps.Journal(func() error { return s.opts.Journal.Save(ctx, e) }, granted)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.jerr = fmt.Errorf("%w: %w", ErrJournal, err)
		return s.jerr
	}
	s.jmark, s.jerr = m, nil
	return nil
}

// dropJournalToken takes l's token out of the Journal, keeping its mark (at least
// mark), before the session sends a Release under it. A Release still on its way when the
// process crashes could otherwise run after a successor resumed the lease from the
// journal, and free the value under it with a mark below its IDs. It reports
// whether the Release may be sent: with a journal that cannot be written, it may
// not, and the lease expires by itself.
//
// It writes even when the journal is not known to name l: a Save that reported an
// error may have written it all the same.
func (s *Session) dropJournalToken(ctx context.Context, l Lease, mark unixMilli) bool {
	if s.opts.Journal == nil {
		return true
	}
	if err := s.opts.Journal.Save(ctx, JournalEntry{Scope: s.scope, Value: l.Value, Owner: l.Owner, Mark: int64(mark)}); err != nil {
		s.log.Error("lease: the journal cannot be written, so the lease is not released: it expires after the TTL", "scope", s.scope, "value", l.Value, "err", err)
		return false
	}
	s.mu.Lock()
	s.jmark = mark
	s.mu.Unlock()
	return true
}

// journalLead is how far beyond the clock a journal write reaches: two renewal
// intervals, so that one is left when the next write is due.
func (s *Session) journalLead() time.Duration { return 2 * s.every }
