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
