package lease

import (
	"context"
	"errors"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/sched"
)

// Renewing in the background: every interval the session writes its journal,
// reserves ahead in the store and grants again; a store that does not answer is
// tried again sooner while the generator issues through the outage budget, and a
// lost lease is acquired again.

// recordFailure counts a failed acquisition, renewal or journal write and keeps
// its message, so that Status shows why a session is not issuing without a look
// at the logs.
func (s *Session) recordFailure(err error) {
	s.mu.Lock()
	s.status.Failures++
	s.status.LastError = err.Error()
	s.mu.Unlock()
}

// run renews every interval until the session ends. A lost lease is acquired again
// (possibly another value); a renewal the store did not answer is tried again sooner,
// while the generator goes on until its grant ends; an error that retrying cannot cure
// ends the session (endOnError).
func (s *Session) run() {
	defer close(s.stopped)
	next := s.renewalWait()
	failing := 0 // renewals in a row the store did not answer
	var lastMsg string
	var lastLog int64
	for {
		// Every wait is on the clock, so that a simulation, which owns all time,
		// decides when the session wakes.
		if s.sleep(s.ctx, next) != nil {
			return // closed
		}
		next = s.renewalWait()
		err := s.renew()
		switch {
		case err == nil:
		case s.ctx.Err() != nil:
			return // closed while renewing
		case errors.Is(err, ErrLost):
			s.recordFailure(err)
			s.loseLease(err)
			if err := s.acquire(s.ctx); err != nil {
				s.endOnError(err)
				return
			}
		case permanent(err):
			s.recordFailure(err)
			s.g.Revoke(err)
			s.endOnError(err)
			return
		default:
			s.recordFailure(err)
			// The store did not answer: the generator goes on through the outage
			// budget; try again soon, so that issuing goes on with a fresh budget
			// within a retry of the store's return.
			// Once when the streak starts, then when the error changes (a store that
			// answered a timeout now answers NOREPLICAS, say), at most every 10 s.
			if msg := err.Error(); failing == 0 || msg != lastMsg && s.opts.Clock.Now()-lastLog >= int64(10*time.Second) {
				s.log.Warn("lease: the store did not answer a renewal; issuing goes on through the outage budget",
					"scope", s.scope, "budget", s.opts.Budget, "issuing_until", time.Unix(0, s.budgetEnd()).UTC(), "failed_renewals", failing, "err", err)
				lastMsg, lastLog = msg, s.opts.Clock.Now()
			}
			failing++
			next = s.retryWait(failing)
			continue
		}
		if failing > 0 {
			s.log.Info("lease: the store answers again", "scope", s.scope, "failed_renewals", failing)
		}
		failing = 0
	}
}

// endOnError ends the session for err, which retrying cannot cure, unless Close ended it
// first. The generator has been revoked; a value the session still holds (when a
// renewal met err) stays held in the store until Close releases it or its lease
// expires.
func (s *Session) endOnError(err error) {
	if s.ctx.Err() != nil {
		return // closed
	}
	s.log.Error("lease: the session stopped: it cannot hold a node value again without a change; the generator stopped, and Close releases the value",
		"scope", s.scope, "err", err)
	s.cancel(err)
}

// sleep waits d on the session's clock, or until ctx ends.
func (s *Session) sleep(ctx context.Context, d time.Duration) error {
	return s.opts.Clock.SleepUntil(ctx, s.opts.Clock.Now()+int64(d))
}

// renew extends the lease and its reservation, then the grant: the same reserve and
// grant steps as an acquisition, under the lease the session holds. The reservation
// comes from the same formula (reservation) with the mark the store has for this
// lease as held.
//
// The Journal's mark is written first, and on its own: while the store does not
// answer, the journal's writes go on, and the generator issues through the store's
// last reservation (the outage budget) and the journal's mark, whichever ends first.
func (s *Session) renew() error {
	s.mu.Lock()
	l, held, above, node := s.l, s.mark, s.above, s.status.Node
	s.mu.Unlock()
	sent := s.opts.Clock.Now()
	if err := s.writeJournal(s.ctx, l, l.Epoch+1, above, sent); err != nil {
		s.recordFailure(err)
		s.log.Error("lease: the journal cannot be written; the generator stops at the end of its mark unless a write succeeds", "scope", s.scope, "err", err)
	}
	// With the journal's new mark, or, when it failed, with its cause, which the
	// generator's refusals name once its mark runs out.
	if err := s.regrant(); err != nil {
		return refused(err)
	}
	mark := reservation(held, above, sent, s.reservationLead())
	ctx, cancel := clock.WithTimeout(s.ctx, s.opts.Clock, s.callTimeout())
	defer cancel()
	l2, err := s.reserve(ctx, l, node, above, mark, sent)
	if err != nil {
		return err
	}
	until := s.fenceEnd(sent)
	if err := s.grant(node, above, s.grantThrough(mark), until); err != nil {
		return refused(err)
	}
	s.mu.Lock()
	s.l, s.mark, s.until = l2, mark, until
	s.status.Renewals++
	s.status.Renewed = time.Unix(0, sent).UTC()
	s.mu.Unlock()
	return nil
}

// callTimeout bounds one renewal: about half an interval, at least 500 ms and at
// most the interval. A store that hangs costs one timeout; the budget covers the
// renewals it fails, and the next attempt comes within maxRetry.
func (s *Session) callTimeout() time.Duration {
	return min(max(s.every/2, 500*time.Millisecond), s.every)
}

// renewalWait is the wait before the next renewal while the store answers: the
// interval, less up to a tenth at random, so that nodes started together do not
// renew in step (a fleet's writes would come in bursts) and no renewal comes later
// than the interval the reservation counts on.
func (s *Session) renewalWait() time.Duration {
	d := s.every / 10
	if d <= 0 {
		return s.every
	}
	return s.every - time.Duration(sched.IntN(s.opts.Clock, int(d)))
}

// retryWait is the wait before the next attempt after failing renewals in a row: a
// quarter interval (at most a quarter second) doubled per failure up to
// maxRetryWait, jittered, so that a store that comes back is found within about a
// second while one that is overloaded gets fewer calls, not more.
func (s *Session) retryWait(failing int) time.Duration {
	d := min(s.every/4, maxRetry/2)
	for i := 1; i < failing && d < maxRetryWait; i++ {
		d *= 2
	}
	return jitter(s.opts.Clock, min(d, maxRetryWait))
}

// maxRetryWait caps the wait between renewal attempts while the store does not
// answer.
const maxRetryWait = time.Second

// maxRetry caps the wait between attempts at the store while it does not answer,
// so that a session is back within about that long of the store's return.
const maxRetry = 500 * time.Millisecond

// jitter returns a wait from d/2 to d, so that the nodes of a fleet that lost the
// store together do not come back to it in step.
func jitter(clk clock.Clock, d time.Duration) time.Duration {
	if d <= time.Millisecond {
		return d
	}
	return d/2 + time.Duration(sched.IntN(clk, int(d/2)))
}

// budgetEnd is when the generator stops if the store answers no more: the end of
// the reservation the store confirmed, or the fence, whichever comes first (clock
// nanoseconds).
func (s *Session) budgetEnd() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(s.mark.ns(), s.until)
}

// loseLease stops the generator at once, with err as the reason its refusals give,
// and records that the session holds no lease: a renewal found that the store no
// longer has it, so another holder may have the value, and the run loop acquires
// again.
func (s *Session) loseLease(err error) {
	s.g.Revoke(err)
	s.mu.Lock()
	s.held = false
	s.status.Held = false
	s.status.Losses++
	s.mu.Unlock()
	s.log.Error("lease: lost the node value; the generator stopped and a new lease is being acquired", "scope", s.scope, "err", err)
}
