package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/fence"
	"github.com/flurryid/flurry/internal/leasestep"
	"github.com/flurryid/flurry/internal/nodepool"
	"github.com/flurryid/flurry/internal/sched"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/snowflake"
)

// Options configures a Session. Store is required; the zero value of every other field
// is a documented default.
type Options struct {
	// Store keeps the leases.
	Store Store
	// Scope names the pool, e.g. "orders". The values of node fields that are not
	// leased (Node) are added to it, so datacenter 1 and datacenter 2 lease from
	// separate pools. Empty means "default".
	Scope string
	// Layout is the generator's layout. Nil means the "twitter" preset.
	Layout *layout.Layout
	// Leased names the node fields the leased value fills, most significant first;
	// the pool has 2^(their bits) values. Empty means every node field.
	Leased []string
	// Node gives the values of the node fields that are not leased.
	Node layout.NodeValues
	// Fixed, when set, leases exactly this value instead of any free one of the pool:
	// for node values that come from configuration, a StatefulSet ordinal or an IP
	// address. The lease still guards the value against a second holder and keeps its
	// high-water mark.
	Fixed *int64
	// Prefer, when set and Fixed is not, is the value to try first: Prefer mod the
	// pool's size when it is free, else any free one as without it. The embedded
	// default store of flurry serve prefers a value derived from the machine, so
	// that two servers left on the defaults on two machines, each with a store of
	// its own, rarely take the same value.
	Prefer *uint64
	// Order says which earlier IDs a new holder starts above: those of every
	// ended lease of the scope (OrderScope, the zero value), or those of its own
	// value only (OrderValue). See Order.
	Order Order
	// Owner names this holder in listings. Empty means host/pid/random.
	Owner string
	// Budget is the outage budget: how long the generator goes on issuing when the
	// store stops answering. Every renewal reserves Budget plus one renewal interval
	// ahead of the clock, and the TTL is long enough to cover it, so a store outage
	// shorter than Budget costs no refusal; past it the generator stops (ErrLost)
	// until the store answers. What it costs: a crashed holder's value stays held
	// for the TTL, unless its successor resumes it from a Journal, and a takeover
	// without a journal starts above a mark up to Budget ahead of the crashed
	// holder's clock (docs/leases.md). From MinBudget to MaxBudget; zero means one
	// minute, or, when TTL is set, the most that TTL allows (TTL minus its margin and
	// one renewal interval).
	Budget time.Duration
	// TTL is the lease's time to live in the store, from MinTTL to MaxTTL: how long a
	// crashed holder's value stays held. It must cover Budget, one renewal interval
	// and the fence's margin (TTL/10 + 50 ms). Zero means the shortest TTL that does,
	// in whole seconds: 69 s with the defaults.
	TTL time.Duration
	// Window is the renewal interval: the session writes to the store every Window
	// (every TTL/3 if that is shorter), so the store sees one write per Window per
	// node, and to its Journal about as often. From MinWindow to MaxWindow; zero
	// means 2 s.
	Window time.Duration
	// Journal, when set, keeps the lease and a local mark on this process's disk,
	// so that the next process on the same journal resumes the lease after a crash
	// at once, and starts above what this one issued even when its clock is behind
	// (see Journal). The session writes it before each write to the store (about
	// once per Window; more often while the store does not answer) and before each
	// grant; the generator issues only below the journal's mark too, so a disk that
	// stops taking writes stops the generator within two Windows, with a refusal
	// that wraps ErrJournal. Nil means none.
	// The session does not close it.
	Journal Journal
	// Clock must be the generator's clock. Nil means clock.NewSystem().
	Clock clock.Clock
	// Logger receives acquisitions, losses and store errors. Nil means slog.Default().
	Logger *slog.Logger
}

// Status describes a session for people and dashboards.
type Status struct {
	Scope string            `json:"scope"`
	Held  bool              `json:"held"`
	Value int64             `json:"value"`
	Node  layout.NodeValues `json:"-"`
	// NodeText is Node written as name=value pairs.
	NodeText string `json:"node"`
	Owner    string `json:"owner"`
	// Expires is the lease's expiry by the store's clock; Until is when the generator
	// stops issuing without a renewal, by the local clock (earlier, by the margin).
	Expires time.Time `json:"expires"`
	Until   time.Time `json:"until"`
	// Above is the mark this holder starts above: the one earlier holders of the
	// value left, or with OrderScope the highest of the scope's ended leases;
	// Mark is the reservation written now,
	// through which the generator may issue; WindowLeft is Mark minus now.
	Above      time.Time     `json:"above"`
	Mark       time.Time     `json:"mark"`
	WindowLeft time.Duration `json:"window_left"`
	// Journal is the mark the session's Journal holds (zero without one); the
	// generator issues only through the earlier of Mark and Journal.
	Journal time.Time `json:"journal,omitempty"`
	// Resumed reports that this session took over the lease of the process that
	// ran on its Journal before, instead of acquiring one.
	Resumed bool `json:"resumed,omitempty"`
	// Budget and TTL are the session's outage budget and lease TTL (Options).
	Budget time.Duration `json:"budget"`
	TTL    time.Duration `json:"ttl"`
	// Renewed is when the store last confirmed a reservation (by the local clock);
	// BudgetLeft is how much longer the generator may issue if the store answers no
	// more: the earlier of the reservation's end and the fence, minus now.
	Renewed    time.Time     `json:"renewed"`
	BudgetLeft time.Duration `json:"budget_left"`
	Renewals   int64         `json:"renewals"`
	Failures   int64         `json:"failures"`
	Losses     int64         `json:"losses"`
	LastError  string        `json:"last_error,omitempty"`
}

// Session holds a lease for a generator: it acquires a value, reserves ticks a window
// ahead in the store before the generator may issue in them, renews in the
// background, and grants the generator the right to issue only while that is safe.
// When the lease is lost it stops the generator and acquires again, possibly another
// value; the generator resumes above that value's mark.
type Session struct {
	opts   Options
	g      fence.Target
	scope  string
	size   int64
	pool   nodepool.Pool // how a leased value fills the node fields
	margin time.Duration
	every  time.Duration
	log    *slog.Logger

	// resume is the Journal's entry of a lease this session may resume (a crashed
	// predecessor's, of this scope); nil once resumed, or found gone.
	resume *JournalEntry

	mu     sync.Mutex
	l      Lease
	held   bool
	above  unixMilli // the mark this holder starts above
	mark   unixMilli // the reservation the store confirmed: the generator may issue through it
	until  int64     // the fence: the grant ends when the clock reads it (ns)
	jmark  unixMilli // the Journal's mark: the generator may issue through it too; never lowered but by Close
	jfloor unixMilli // the Journal's mark as loaded: what the processes before this one issued
	jerr   error     // why the Journal's last write failed (wraps ErrJournal); nil once one succeeds
	status Status

	// ctx is the session's own context: derived from Start's, whose values it keeps
	// but not its end (Start's ctx bounds the first acquisition only), and cancelled,
	// with the reason as its cause, when the session ends: by Close (ErrClosed), or by
	// an error it cannot recover from (run). Every wait of the session (its sleeps on
	// the clock, its store calls) ends with it, and Done is its Done.
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stopped chan struct{} // closed when run returns: no renewal, and no grant, after it

	closeOnce sync.Once
	closeErr  error

	// steps are the protocol's steps: the zero value, unless a simulation's store
	// replaces some with known-bad variants to show that its checker catches them.
	steps leasestep.Steps
}

// Start acquires a lease for g, waiting (and retrying) until it gets one or ctx ends,
// grants g, and renews in the background until Close. g must be a generator made by
// NewGenerator, on opts.Layout with opts.Clock, whose session was closed; any other
// fails at once with ErrBadConfig.
//
// Errors that retrying cannot cure are returned at once: options Start refuses, and
// arguments the store refuses, match ErrBadConfig, as does a generator that does not
// fit the session; a closed generator matches snowflake.ErrClosed, a value another
// generator of this process holds snowflake.ErrInUse. Other failures (the store
// unreachable, every value held) are retried until ctx ends; the error then wraps
// both ctx's error and the last failure, so that errors.Is finds, say,
// ErrNoFreeValue.
//
// The session's own context is derived from ctx: it keeps ctx's values, but not its
// deadline or cancellation, which bound only this first acquisition.
func Start(ctx context.Context, g *snowflake.Generator, opts Options) (*Session, error) {
	var t fence.Target
	if g != nil {
		t = fence.TargetOf(g)
	}
	if t == nil {
		return nil, badConfig("lease: Start needs a generator made by lease.NewGenerator; one from snowflake.New takes its node value from its Options and cannot be fed by a lease")
	}
	s, err := newSession(t, opts)
	if err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	if err := s.loadJournal(ctx); err != nil {
		s.cancel(err)
		return nil, err
	}
	if err := s.acquire(ctx); err != nil {
		s.cancel(err)
		return nil, err
	}
	sched.Go(s.opts.Clock, s.run)
	return s, nil
}

func newSession(g fence.Target, opts Options) (*Session, error) {
	if opts.Store == nil {
		return nil, badConfig("lease: Options.Store is required")
	}
	if opts.Layout == nil {
		opts.Layout, _ = layout.Lookup("twitter")
	}
	if opts.Scope == "" {
		opts.Scope = "default"
	}
	t, err := ResolveTiming(opts.Budget, opts.TTL, opts.Window)
	if err != nil {
		return nil, err
	}
	opts.Budget, opts.TTL, opts.Window = t.Budget, t.TTL, t.Window
	margin, every := t.Margin, t.Every
	if opts.Order != OrderScope && opts.Order != OrderValue {
		return nil, badConfig("lease: unknown Options.Order %v", opts.Order)
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewSystem()
	}
	if opts.Owner == "" {
		opts.Owner = DefaultOwner()
	}
	s := &Session{opts: opts, g: g, log: opts.Logger, stopped: make(chan struct{}), steps: leasestep.Of(opts.Store)}
	if s.log == nil {
		s.log = slog.Default()
	}
	l := opts.Layout
	fields := l.NodeFields()
	if len(fields) == 0 {
		return nil, badConfig("lease: layout %s has no node field to lease", l)
	}
	names := opts.Leased
	if len(names) == 0 {
		for _, f := range fields {
			names = append(names, f.Name)
		}
	}
	pool, err := nodepool.Plan(poolLayout(l), names, opts.Node)
	var given *nodepool.GivenError
	var wide *nodepool.WideError
	switch {
	case errors.As(err, &given):
		return nil, badConfig("lease: node field %q is leased, so Node must leave it zero", given.Field)
	case errors.As(err, &wide):
		return nil, badConfig("lease: %v: fix some fields with Node", err)
	case err != nil:
		return nil, &configError{msg: "lease: " + err.Error(), err: err}
	}
	s.pool, s.size = pool, pool.Size
	s.scope = opts.Scope + pool.Fixed
	if opts.Fixed != nil {
		if *opts.Fixed < 0 || *opts.Fixed >= s.size {
			return nil, badConfig("lease: fixed value %d is outside the pool 0..%d of the leased fields %s", *opts.Fixed, s.size-1, strings.Join(names, ", "))
		}
	}
	if err := checkScope(s.scope); err != nil {
		return nil, err
	}
	s.margin, s.every = margin, every
	s.status.Scope = s.scope
	s.status.Owner = opts.Owner
	s.status.Budget, s.status.TTL = opts.Budget, opts.TTL
	return s, nil
}

// DefaultOwner names this process: host, pid and a random suffix.
func DefaultOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// nodeOf spreads a leased value over the leased fields, high bits first.
func (s *Session) nodeOf(v int64) layout.NodeValues {
	return s.pool.NodeOf(s.opts.Node, v)
}

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
		s.note(err)
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

// permanent reports whether retrying cannot cure err: configuration that the session,
// the store or the generator refuses (ErrBadConfig), a node value that another
// generator of this process holds (snowflake.ErrInUse), a closed generator
// (snowflake.ErrClosed).
func permanent(err error) bool {
	return errors.Is(err, ErrBadConfig) || errors.Is(err, snowflake.ErrInUse) || errors.Is(err, snowflake.ErrClosed)
}

// refused wraps an error of the generator's Grant. Grant fails only for reasons that
// retrying cannot cure: a closed generator (snowflake.ErrClosed), a node value that
// another generator of this process holds (snowflake.ErrInUse), or a generator that
// does not fit the session (not Managed, or a layout the node value does not fit),
// which is a configuration error and matches ErrBadConfig.
func refused(err error) error {
	if errors.Is(err, snowflake.ErrClosed) || errors.Is(err, snowflake.ErrInUse) {
		return fmt.Errorf("lease: the generator refused the grant: %w", err)
	}
	return &configError{msg: "lease: the generator refused the grant (it must be a Managed generator on the session's layout): " + err.Error(), err: err}
}

// ErrBadConfig is matched (errors.Is) by the errors that retrying cannot cure because
// of configuration: Options that Start refuses, arguments that a store refuses
// (package leasestore's checks, etcd's "too large lease TTL"), and a
// generator that does not fit the session. Start returns them at once.
var ErrBadConfig = errors.New("lease: bad configuration")

// ErrJournal is wrapped, with the file system's error, by the generator's refusals
// (ErrLost) when they come from a Journal that cannot be written: a full disk, a
// read-only or failing file system. Retrying does not cure that; freeing disk
// space does, and the session resumes by itself once a write succeeds.
var ErrJournal = fence.ErrJournal

// ErrClosed is the cause a session that Close ended reports: Err returns it, and the
// generator's refusals (ErrLost) after Close name it.
var ErrClosed = errors.New("lease: session closed")

// tryAcquire makes one attempt to hold a value, in steps: claim a value, find the
// mark to start above (floor), reserve a window in the store, grant the generator
// that window, and record the lease (hold). The order is the protocol's
// (docs/correctness.md, steps 1 and 2): nothing is granted before the store has
// confirmed the reservation, so that at every moment the store's mark is at or above
// every tick the generator may issue in, and a holder that takes the value after a
// crash starts above all of them. When a step after the claim fails, the value is
// released again (abandon).
//
// The clock is read once, right before the reservation is written: that reading
// (sent) is both where the reservation is measured from and where the grant's fence
// is (see fence).
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
	above, err := s.floor(ctx, l)
	if err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	// Above what this journal's earlier processes issued, whatever value they had:
	// a restart after a crash on a clock that stepped back continues above them.
	// Not above this process's own journal writes: each failed attempt wrote one
	// two intervals ahead, and retries would run the floor ahead of the clock.
	above = max(above, s.jfloor)
	sent := s.opts.Clock.Now()
	// At acquisition the store's mark for this lease is the one the holder starts
	// above: reservation(above, above, ...) is max(above, now) + ahead.
	mark := reservation(above, above, sent, s.ahead())
	if err := s.journal(ctx, l, l.Epoch+1, above, sent); err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	node := s.nodeOf(l.Value)
	l2, err := s.reserve(ctx, l, node, above, mark, sent)
	if err != nil {
		s.abandon(ctx, l, l.Mark)
		return err
	}
	until := s.fence(sent)
	if err := s.grant(node, above, s.through(mark), until); err != nil {
		s.abandon(ctx, l2, l.Mark)
		return refused(err)
	}
	s.hold(l2, node, above, mark, until, false)
	return nil
}

// journalMark returns the Journal's mark this session wrote or loaded (0 without a
// journal).
func (s *Session) journalMark() unixMilli {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jmark
}

// journal writes l, epoch (the epoch of the store write that follows it, under
// l: Lease.Epoch+1) and a local mark reaching jahead beyond max(above, sent) to the
// Journal, before that store write and before a grant may let the generator issue
// up to the mark. It writes before every store write, so that the journal's epoch
// names each one: a journal found behind the store's epoch after a crash was
// restored or copied, not left by this session (tryResume). It returns an error
// wrapping ErrJournal and the Journal's error, which the generator's refusals name
// until a write succeeds; without a journal it does nothing.
func (s *Session) journal(ctx context.Context, l Lease, epoch int64, above unixMilli, sent int64) error {
	if s.opts.Journal == nil {
		return nil
	}
	m := reservation(s.journalMark(), above, sent, s.jahead())
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

// unjournal takes l's token out of the Journal, keeping its mark (at least mark),
// before the session sends a Release under it. A Release still on its way when the
// process crashes could otherwise run after a successor resumed the lease from the
// journal, and free the value under it with a mark below its IDs. It reports
// whether the Release may be sent: with a journal that cannot be written, it may
// not, and the lease expires by itself.
//
// It writes even when the journal is not known to name l: a Save that reported an
// error may have written it all the same.
func (s *Session) unjournal(ctx context.Context, l Lease, mark unixMilli) bool {
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

// jahead is how far beyond the clock a journal write reaches: two renewal
// intervals, so that one is left when the next write is due.
func (s *Session) jahead() time.Duration { return 2 * s.every }

// through is what the generator may issue through, given the store's reservation
// mark: the earlier of it and the Journal's mark.
func (s *Session) through(mark unixMilli) unixMilli {
	if s.opts.Journal == nil {
		return mark
	}
	if s.steps.Through != nil {
		return unixMilli(s.steps.Through(int64(mark), int64(s.journalMark())))
	}
	return min(mark, s.journalMark())
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

// floor returns the mark the holder of l starts above. The value's own mark is at or
// above every tick any earlier holder of the value issued or may still issue in: they
// all reserved before issuing, and a release lowers the mark only to what its holder
// issued. With OrderScope it is also above the marks of the scope's values that no
// live lease holds (see Order), so a restart on a slower clock does not issue below
// IDs of the scope's ended leases.
func (s *Session) floor(ctx context.Context, l Lease) (unixMilli, error) {
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

// reserve writes mark to the store under l: the first step of every acquisition and
// renewal, before the generator may issue through mark (grant). The store raises the
// value's mark only while l is its live lease (the token), so a holder that lost its
// lease cannot reserve, nor be granted, any further. It returns l with its new
// expiry, or the store's error (ErrLost when l is no longer live).
func (s *Session) reserve(ctx context.Context, l Lease, node layout.NodeValues, above, mark unixMilli, sent int64) (Lease, error) {
	if s.steps.Reserve == nil {
		return s.opts.Store.Renew(ctx, l, s.opts.TTL, int64(mark))
	}
	var out Lease
	err := s.steps.Reserve(func() (err error) {
		out, err = s.opts.Store.Renew(ctx, l, s.opts.TTL, int64(mark))
		return err
	}, func() { s.grant(node, above, s.through(mark), s.fence(sent)) })
	return out, err
}

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
	if !s.unjournal(ctx, l, s.journalMark()) {
		return
	}
	s.opts.Store.Release(ctx, l, mark)
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
	return s.grant(node, above, s.through(mark), until)
}

// hold records a lease that was reserved and granted; resumed says it was the
// journal's.
func (s *Session) hold(l Lease, node layout.NodeValues, above, mark unixMilli, until int64, resumed bool) {
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

func (s *Session) note(err error) {
	s.mu.Lock()
	s.status.Failures++
	s.status.LastError = err.Error()
	s.mu.Unlock()
}

// run renews every interval until the session ends. A lost lease is acquired again
// (possibly another value); a renewal the store did not answer is tried again sooner,
// while the generator goes on until its grant ends; an error that retrying cannot cure
// ends the session (end).
func (s *Session) run() {
	defer close(s.stopped)
	next := s.steady()
	failing := 0 // renewals in a row the store did not answer
	var lastMsg string
	var lastLog int64
	for {
		// Every wait is on the clock, so that a simulation, which owns all time,
		// decides when the session wakes.
		if s.sleep(s.ctx, next) != nil {
			return // closed
		}
		next = s.steady()
		err := s.renew()
		switch {
		case err == nil:
		case s.ctx.Err() != nil:
			return // closed while renewing
		case errors.Is(err, ErrLost):
			s.note(err)
			s.lose(err)
			if err := s.acquire(s.ctx); err != nil {
				s.end(err)
				return
			}
		case permanent(err):
			s.note(err)
			s.g.Revoke(err)
			s.end(err)
			return
		default:
			s.note(err)
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
			next = s.retry(failing)
			continue
		}
		if failing > 0 {
			s.log.Info("lease: the store answers again", "scope", s.scope, "failed_renewals", failing)
		}
		failing = 0
	}
}

// end ends the session for err, which retrying cannot cure, unless Close ended it
// first. The generator has been revoked; a value the session still holds (when a
// renewal met err) stays held in the store until Close releases it or its lease
// expires.
func (s *Session) end(err error) {
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

// fence returns the end of a grant whose reservation was sent when the clock read
// sent: TTL minus the margin after the send. The store sets the lease's expiry to its
// commit time plus TTL, and the commit comes after the send, so a grant counted from
// the send ends before the expiry however slow the reply: the delay only shortens the
// grant. The margin covers the rate error between the store's clock and this one and
// a pause between a generator's clock reading and its ID (docs/correctness.md,
// "Assumptions").
func (s *Session) fence(sent int64) int64 {
	start := sent
	if s.steps.FenceFrom != nil {
		start = s.steps.FenceFrom(sent)
	}
	return start + int64(s.opts.TTL-s.margin)
}

// ahead is how far beyond the clock a reservation reaches: the outage budget plus
// the renewal interval, so that when a renewal is due, and the store stops
// answering then, a whole budget of reservation is left (Options.Budget).
func (s *Session) ahead() time.Duration { return s.opts.Budget + s.every }

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
	l, held, above, node, until := s.l, s.mark, s.above, s.status.Node, s.until
	s.mu.Unlock()
	sent := s.opts.Clock.Now()
	if err := s.journal(s.ctx, l, l.Epoch+1, above, sent); err != nil {
		s.note(err)
		s.log.Error("lease: the journal cannot be written; the generator stops at the end of its mark unless a write succeeds", "scope", s.scope, "err", err)
	}
	// With the journal's new mark, or, when it failed, with its cause, which the
	// generator's refusals name once its mark runs out.
	if err := s.regrant(); err != nil {
		return refused(err)
	}
	mark := reservation(held, above, sent, s.ahead())
	ctx, cancel := clock.WithTimeout(s.ctx, s.opts.Clock, s.callTimeout())
	defer cancel()
	l2, err := s.reserve(ctx, l, node, above, mark, sent)
	if err != nil {
		return err
	}
	until = s.fence(sent)
	if err := s.grant(node, above, s.through(mark), until); err != nil {
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

// steady is the wait before the next renewal while the store answers: the
// interval, less up to a tenth at random, so that nodes started together do not
// renew in step (a fleet's writes would come in bursts) and no renewal comes later
// than the interval the reservation counts on.
func (s *Session) steady() time.Duration {
	d := s.every / 10
	if d <= 0 {
		return s.every
	}
	return s.every - time.Duration(sched.IntN(s.opts.Clock, int(d)))
}

// retry is the wait before the next attempt after failing renewals in a row: a
// quarter interval (at most a quarter second) doubled per failure up to
// maxRetryWait, jittered, so that a store that comes back is found within about a
// second while one that is overloaded gets fewer calls, not more.
func (s *Session) retry(failing int) time.Duration {
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

func (s *Session) lose(err error) {
	s.g.Revoke(err)
	s.mu.Lock()
	s.held = false
	s.status.Held = false
	s.status.Losses++
	s.mu.Unlock()
	s.log.Error("lease: lost the node value; the generator stopped and a new lease is being acquired", "scope", s.scope, "err", err)
}

// Status returns the session's state now.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Expires = s.l.Expires
	st.Until = time.Unix(0, s.until).UTC()
	st.Above = s.above.time()
	st.Mark = s.mark.time()
	now := s.opts.Clock.Now()
	st.WindowLeft = time.Duration(s.mark.ns() - now)
	if s.opts.Journal != nil && s.jmark > 0 {
		st.Journal = s.jmark.time()
	}
	if s.held {
		st.BudgetLeft = max(time.Duration(min(s.mark.ns(), s.until)-now), 0)
	}
	return st
}

// Done returns a channel that is closed when the session ends: when Close is called,
// or when the session lost its lease for good, because an error that retrying cannot
// cure met a renewal or the acquisition after a loss (a closed generator, a store that
// refuses the configuration). Err then says which. From then on the session does not
// renew, and the generator refuses (ErrLost); Close still releases
// the value.
//
// A lost lease that the session acquires again, possibly another value, does not
// close it: the generator pauses (ErrLost) and resumes by itself, and
// Status().Losses counts the losses.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// Err returns nil while the session runs. Once Done is closed it returns ErrClosed
// if Close ended the session, or else the error that ended it.
func (s *Session) Err() error { return context.Cause(s.ctx) }

// Close ends the session: it stops renewing, stops the generator (ErrLost) and
// releases the lease, keeping its mark, so another process can take the value at
// once. The release is bounded by the TTL: past it the lease has expired anyway.
//
// Close may be called any number of times, from any goroutines at once, and after
// the session ended by itself (Done): every call waits for the first to finish and
// returns its result.
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Session) close() error {
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
	// after it (unjournal). If the Release does not reach the store, the lease
	// expires after the TTL.
	if !s.unjournal(ctx, l, mark) {
		return fmt.Errorf("lease: release %s/%d: the journal cannot be written, so the lease is left to expire", s.scope, l.Value)
	}
	rerr := s.opts.Store.Release(ctx, l, int64(mark))
	if rerr != nil && !errors.Is(rerr, ErrLost) {
		return fmt.Errorf("lease: release %s/%d: %w", s.scope, l.Value, rerr)
	}
	return nil
}

// NewGenerator makes a generator fed by a lease and starts a session that feeds it:
// the way to issue IDs with a leased node value. The generator takes its node value
// from the session (gopts.Node and Standby must be zero; lopts.Node gives the fields
// that are not leased; gopts.Fence is set here) and refuses with ErrLost while it
// holds no valid lease.
// The generator and the session share one layout and one clock: give each in
// either options struct (both nil means the twitter preset and clock.NewSystem());
// two that differ are refused with ErrBadConfig. Close the session, then the generator.
func NewGenerator(ctx context.Context, gopts snowflake.Options, lopts Options) (*snowflake.Generator, *Session, error) {
	switch {
	case gopts.Layout == nil && lopts.Layout != nil:
		gopts.Layout = lopts.Layout
	case gopts.Layout == nil:
		gopts.Layout, _ = layout.Lookup("twitter")
	case lopts.Layout != nil && lopts.Layout.String() != gopts.Layout.String():
		return nil, nil, badConfig("lease: Options.Layout %s and the generator's layout %s differ; give one of them (the session takes the generator's)", lopts.Layout, gopts.Layout)
	}
	switch {
	case gopts.Clock == nil && lopts.Clock != nil:
		gopts.Clock = lopts.Clock
	case gopts.Clock == nil:
		gopts.Clock = clock.NewSystem()
	case lopts.Clock != nil && lopts.Clock != gopts.Clock:
		return nil, nil, badConfig("lease: Options.Clock and the generator's clock differ; give one of them (the session's fence must be measured on the generator's clock)")
	}
	lopts.Layout, lopts.Clock = gopts.Layout, gopts.Clock
	gopts.Fence = fence.New()
	g, err := snowflake.New(gopts)
	if err != nil {
		return nil, nil, err
	}
	s, err := Start(ctx, g, lopts)
	if err != nil {
		g.Close()
		return nil, nil, err
	}
	return g, s, nil
}

// poolLayout gives nodepool what it reads of a layout: nodepool sits among the
// helpers below layout, so it takes the node fields as plain values.
func poolLayout(l *layout.Layout) nodepool.Layout {
	var fields []nodepool.Field
	for _, f := range l.NodeFields() {
		fields = append(fields, nodepool.Field{Name: f.Name, Bits: f.Bits})
	}
	return nodepool.Layout{Name: l.String(), Fields: fields, Check: func(v nodepool.Values) error { return l.CheckNodeValues(v) }}
}
