package segment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/sched"
)

// Options configures an Allocator. The zero value of every field but Stores and Tag
// is a usable default, Leaf's where Leaf has one.
type Options struct {
	// Stores are where the tag's ranges come from. With one store an ID is the
	// store's counter value itself. With N stores (Flickr's two ticket servers,
	// tinyid's delta/remainder) store k hands out only IDs = k (mod N): counter value
	// c of store k becomes the ID c*N+k, so the stores never need to talk to each
	// other. Every allocator of the tag must list the same stores in the same order.
	// The allocator starts at a random store, stays with it while it answers and
	// moves to the next one when it fails or does not answer within FetchTimeout;
	// a store whose last attempt failed is tried after the others. To start while
	// some stores are down, open them with OpenStores.
	Stores []Store
	// Residues places the stores in residue classes of a larger ID space, for
	// stores that serve one tag from several regions that never talk to each
	// other (docs/multi-region.md): store i yields only IDs = Residues[i] (mod
	// Modulus), its counter value c becoming the ID c*Modulus+Residues[i]. Each
	// region lists its own stores with residues no other region uses. Nil means
	// 0, 1, ..., len(Stores)-1; otherwise it has one distinct residue per store,
	// each below Modulus.
	Residues []int64
	// Modulus is N of the residue classes. Zero means len(Stores); with Residues
	// it must be above every residue, and at most 1024. Every allocator of the
	// tag, in every region, must use the same Modulus.
	Modulus int64
	// Tag is the tag to serve (Leaf's biz_tag). It must exist in the stores.
	Tag string

	// Prefetch is the share of the current range used when the next range is fetched
	// in the background. Zero means 0.1, as in Leaf; it must be below 1.
	Prefetch float64
	// Target is how long one range should last. When a range lasted less, the next
	// step doubles (up to MaxStep); when it lasted more than twice as long, the step
	// halves, never below the tag's configured step. Zero means 15 minutes, as in
	// Leaf.
	Target time.Duration
	// MaxStep caps the dynamic step. Zero means 1,000,000, as in Leaf. Runway may
	// take the step above it.
	MaxStep int64
	// Runway is how long the buffered IDs must last at the current rate if every
	// store goes down: the step grows so that what is left of the current range plus
	// the next range covers Runway, above MaxStep if need be (up to the package's
	// MaxStep). Zero means no runway beyond what Target gives. Leaf's MAX_STEP of
	// 1,000,000 gives about 38 s at 50,000 IDs/s; set Runway to what an outage of
	// your database may take.
	Runway time.Duration
	// FetchTimeout bounds one attempt at one store (reading the tag's step for the
	// first range, and the Take). When it passes, or the store fails sooner, the
	// allocator tries the next store in the same fetch, so a store that hangs costs
	// at most this much per fetch, and only once: the next fetch starts with the
	// store that answered. Zero means 5 s. It is measured on Clock
	// (clock.WithTimeout).
	FetchTimeout time.Duration
	// RetryMax is the longest pause between fetch attempts while every store fails;
	// the pauses start at 50 ms and double. Zero means 2 s.
	RetryMax time.Duration
	// Clock times ranges for the dynamic step and the rate, and measures every wait
	// of the allocator: FetchTimeout and the pauses between retries. Nil means
	// clock.NewSystem().
	Clock clock.Clock
	// Logger receives store failures and recoveries. Nil means slog.Default().
	Logger *slog.Logger
}

const (
	defaultPrefetch     = 0.1
	defaultTarget       = 15 * time.Minute
	defaultMaxStep      = 1_000_000
	defaultFetchTimeout = 5 * time.Second
	defaultRetryMax     = 2 * time.Second
	retryMin            = 50 * time.Millisecond
	// guard keeps counters this far below 2^63-1, so that the atomic adds of calls
	// that find a range used up can never wrap around.
	guard = 1 << 40
)

// seg is a range being served: counter values first..last of store `store`.
type seg struct {
	pos     atomic.Int64 // the last counter value handed out (first-1 at the start)
	first   int64
	last    int64
	trigger int64 // the counter value whose taker starts the prefetch
	mul     int64 // ID = counter*mul + add
	add     int64
	store   int
	since   int64 // clock ns when it became current
}

func (s *seg) id(c int64) flurry.ID { return flurry.ID(c*s.mul + s.add) }

// Allocator serves IDs of one tag from two buffered ranges. It is safe for
// concurrent use; IDs returned by one Allocator strictly increase in the order the
// calls took them, also when it moves between stores.
type Allocator struct {
	cur atomic.Pointer[seg]

	opts    Options
	clk     clock.Clock
	log     *slog.Logger
	n       int64   // the modulus N of the residue classes: the number of stores, or Options.Modulus
	res     []int64 // store k's residue: k, or Options.Residues[k]
	kickCh  chan struct{}
	done    chan struct{}
	cancel  context.CancelFunc
	base    context.Context
	fetcher sync.WaitGroup
	poll    time.Duration // under a simulation: poll channels on the clock this often

	mu        sync.Mutex
	next      *seg
	changed   chan struct{} // closed and replaced whenever next, fetchErr or closed change
	closed    bool
	fetchErr  error // the last fetch's error, nil after a success
	permErr   error // an error no retry fixes (unknown tag, exhausted)
	high      flurry.ID
	pref      int    // the store tried first: the last one that answered
	down      []bool // stores whose last attempt failed; tried after the others
	step      int64  // the step the next fresh range is asked with
	minStep   int64  // the tag's configured step, from the last block
	lastFetch int64  // clock ns of the last successful fetch
	rate      float64
	fetches   int64
	failures  int64
	claimed   int64
	lastStore int
	lastOK    time.Time
}

// New takes the tag's first range from the stores and returns an Allocator serving
// it. It fails with an error wrapping ErrUnknownTag when the tag was not created,
// and with the stores' errors when none answers within ctx.
func New(ctx context.Context, opts Options) (*Allocator, error) {
	if len(opts.Stores) == 0 {
		return nil, errors.New("segment: Options.Stores is empty; give at least one store")
	}
	if len(opts.Stores) > 1024 {
		return nil, fmt.Errorf("segment: %d stores; at most 1024 residue classes are supported", len(opts.Stores))
	}
	for i, s := range opts.Stores {
		if s == nil {
			return nil, fmt.Errorf("segment: Options.Stores[%d] is nil", i)
		}
	}
	res, mod, err := CheckResidues(len(opts.Stores), opts.Residues, opts.Modulus)
	if err != nil {
		return nil, err
	}
	if err := checkTagName(opts.Tag); err != nil {
		return nil, err
	}
	if opts.Prefetch == 0 {
		opts.Prefetch = defaultPrefetch
	}
	if !(opts.Prefetch > 0 && opts.Prefetch < 1) {
		return nil, fmt.Errorf("segment: Prefetch %v must be above 0 and below 1", opts.Prefetch)
	}
	if opts.Target == 0 {
		opts.Target = defaultTarget
	}
	if opts.MaxStep == 0 {
		opts.MaxStep = defaultMaxStep
	}
	if opts.FetchTimeout == 0 {
		opts.FetchTimeout = defaultFetchTimeout
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = defaultRetryMax
	}
	if opts.Target < 0 || opts.Runway < 0 || opts.FetchTimeout < 0 || opts.RetryMax < 0 {
		return nil, errors.New("segment: Target, Runway, FetchTimeout and RetryMax must not be negative")
	}
	if opts.MaxStep < 1 || opts.MaxStep > MaxStep {
		return nil, fmt.Errorf("segment: MaxStep %d must be from 1 to %d", opts.MaxStep, int64(MaxStep))
	}
	a := &Allocator{
		opts:    opts,
		clk:     opts.Clock,
		log:     opts.Logger,
		n:       mod,
		res:     res,
		kickCh:  make(chan struct{}, 1),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		pref:    sched.IntN(opts.Clock, len(opts.Stores)),
		poll:    sched.PollEvery(opts.Clock),
		down:    make([]bool, len(opts.Stores)),
	}
	if a.clk == nil {
		a.clk = clock.NewSystem()
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.base, a.cancel = context.WithCancel(context.Background())
	first, err := a.fetch(ctx)
	if err != nil {
		a.cancel()
		return nil, err
	}
	first.since = a.clk.Now()
	a.cur.Store(first)
	a.fetcher.Add(1)
	sched.Go(a.clk, a.run)
	return a, nil
}

// Next returns the next ID. It does not wait on a store while a range is buffered.
// When every buffered ID is used and the last fetch failed, it returns at once an
// error wrapping ErrUnavailable (the allocator keeps trying and serves again when a
// store answers); when a fetch is under way and has not failed, it waits for it
// until ctx is done.
func (a *Allocator) Next(ctx context.Context) (flurry.ID, error) {
	s := a.cur.Load()
	c := s.pos.Add(1)
	if c <= s.last {
		if c == s.trigger {
			a.kick()
		}
		return s.id(c), nil
	}
	var one [1]flurry.ID
	_, err := a.slow(ctx, one[:])
	return one[0], err
}

// NextN fills dst with the next len(dst) IDs, in increasing order, and returns how
// many it filled: len(dst), or fewer with the error that stopped it.
func (a *Allocator) NextN(ctx context.Context, dst []flurry.ID) (int, error) {
	filled := 0
	for filled < len(dst) {
		s := a.cur.Load()
		k := a.takeFrom(s, dst[filled:])
		filled += k
		if filled == len(dst) {
			break
		}
		k, err := a.slow(ctx, dst[filled:])
		filled += k
		if err != nil {
			return filled, err
		}
	}
	return filled, nil
}

// takeFrom takes up to len(dst) values of s and returns how many it took.
func (a *Allocator) takeFrom(s *seg, dst []flurry.ID) int {
	want := int64(len(dst))
	end := s.pos.Add(want)
	start := end - want + 1
	if start > s.last {
		return 0
	}
	if end > s.last {
		end = s.last
	}
	if start <= s.trigger && s.trigger <= end {
		a.kick()
	}
	for c := start; c <= end; c++ {
		dst[c-start] = s.id(c)
	}
	return int(end - start + 1)
}

// slow serves dst when the current range is used up: it moves to the buffered next
// range, or waits for a fetch under way, or reports why it cannot. It fills at least
// one ID unless it returns an error.
func (a *Allocator) slow(ctx context.Context, dst []flurry.ID) (int, error) {
	for {
		a.mu.Lock()
		s := a.cur.Load()
		if k := a.takeFrom(s, dst); k > 0 {
			a.mu.Unlock()
			return k, nil
		}
		// Every value of s is handed out: pull pos back to last so that calls
		// finding s used up cannot push it towards overflow while a store is down.
		s.pos.Store(s.last)
		if a.closed {
			a.mu.Unlock()
			return 0, ErrClosed
		}
		if nx := a.next; nx != nil {
			now := a.clk.Now()
			if el := now - s.since; el > 0 {
				r := float64(s.last-s.first+1) / (float64(el) / 1e9)
				if a.rate == 0 {
					a.rate = r
				} else {
					a.rate = (a.rate + r) / 2
				}
			}
			nx.since = now
			a.next = nil
			a.cur.Store(nx)
			a.mu.Unlock()
			continue
		}
		if a.permErr != nil {
			err := a.permErr
			a.mu.Unlock()
			return 0, err
		}
		if a.fetchErr != nil {
			err := a.fetchErr
			a.mu.Unlock()
			a.kick()
			return 0, fmt.Errorf("%w: tag %q: %w", ErrUnavailable, a.opts.Tag, err)
		}
		ch := a.changed
		a.mu.Unlock()
		a.kick()
		if err := a.wait(ctx, ch, nil); err != nil {
			return 0, fmt.Errorf("segment: tag %q: waiting for the next range: %w", a.opts.Tag, err)
		}
	}
}

// wait blocks until ch can be received from (it is received from), or done is
// closed or ctx is done (then it returns an error). Under a simulation it polls on the
// clock, whose waits are the only ones the simulation sees.
func (a *Allocator) wait(ctx context.Context, ch, done <-chan struct{}) error {
	if a.poll == 0 {
		select {
		case <-ch:
			return nil
		case <-done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		select {
		case <-ch:
			return nil
		case <-done:
			return ErrClosed
		default:
		}
		if err := a.clk.SleepUntil(ctx, a.clk.Now()+int64(a.poll)); err != nil {
			return err
		}
	}
}

// kick asks the fetcher for the next range, without waiting.
func (a *Allocator) kick() {
	select {
	case a.kickCh <- struct{}{}:
	default:
	}
}

// broadcast wakes every call waiting for a change. a.mu must be held.
func (a *Allocator) broadcast() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// run is the fetcher: it fills the next buffer when kicked, retrying with growing
// pauses while every store fails, until the allocator closes.
func (a *Allocator) run() {
	defer a.fetcher.Done()
	pause := retryMin
	for {
		if a.wait(a.base, a.kickCh, a.done) != nil {
			return
		}
		for {
			a.mu.Lock()
			need := a.next == nil && a.permErr == nil && !a.closed
			a.mu.Unlock()
			if !need {
				pause = retryMin
				break
			}
			// Each store attempt has its own deadline (FetchTimeout); the fetch as a
			// whole ends when every store was tried once, or at Close.
			s, err := a.fetch(a.base)
			a.mu.Lock()
			if err == nil {
				a.next = s
				if a.fetchErr != nil {
					a.log.Info("segment: a store answers again; serving new ranges", "tag", a.opts.Tag, "store", s.store)
				}
				a.fetchErr = nil
				a.broadcast()
				a.mu.Unlock()
				pause = retryMin
				continue
			}
			if a.closed {
				// Close cancelled the fetch; nothing to report.
				a.mu.Unlock()
				return
			}
			if errors.Is(err, ErrUnknownTag) || errors.Is(err, ErrExhausted) {
				a.permErr = err
			} else if a.fetchErr == nil {
				a.log.Warn("segment: no store hands out a range; serving what is buffered and retrying", "tag", a.opts.Tag, "err", err)
			}
			a.fetchErr = err
			a.broadcast()
			a.mu.Unlock()
			// Close cancels a.base, which ends the pause.
			if a.clk.SleepUntil(a.base, a.clk.Now()+int64(pause)) != nil {
				return
			}
			if pause *= 2; pause > a.opts.RetryMax {
				pause = a.opts.RetryMax
			}
		}
	}
}

// Residue classes. With N stores, store k (0-based) serves the IDs that are
// k mod N: its counter value c becomes the ID c*N + k (seg.id). The stores never
// talk to each other, so the allocator alone keeps its IDs increasing when it moves
// between them: it asks every store only for counter values whose IDs are above the
// highest ID it ever held (floorFor), and none whose ID could come near the top of
// int64 (limitFor). With one store, N = 1 and k = 0: IDs are the counter values.

// floorFor returns the floor a Take is given so that every ID of the block it
// claims is above high, on any store. Take hands out counter values above floor, so
// the lowest is floor+1, and with floor = high/N (rounded down) floor*N <= high <
// (floor+1)*N <= (floor+1)*N + k. On a store k above high mod N, counter value floor
// itself would also be above high: one value skipped when the allocator moves to
// such a store, which is not worth a case of its own.
func (a *Allocator) floorFor(high flurry.ID) int64 { return int64(high) / a.n }

// limitFor returns the largest counter value store k may hand out: its ID, c*N + k,
// stays at or below 2^63-1 - guard. A counter value is never above its ID, so the
// atomic adds on seg.pos by calls that find a range used up cannot wrap either.
func (a *Allocator) limitFor(k int) int64 { return (math.MaxInt64 - guard - a.res[k]) / a.n }

// stepFromStore is the size a fetch asks for before the allocator knows the tag's
// configured step (nextStep returns it): attempt then reads the step from the
// store's listing and takes that many values, as Leaf starts with the configured
// step. Every block reports the step (Block.Step), so this happens for the first
// range only, unless a store reports none.
const stepFromStore int64 = 0

// fetchPlan is what one fetch asks for, read under a.mu when it starts.
type fetchPlan struct {
	size  int64     // counter values to ask for, or stepFromStore
	high  flurry.ID // the highest ID handed out so far: every new ID must be above it
	order []int     // the stores, in the order to try them
}

// fetch takes the next range from the stores: first the one that answered last,
// then the others in turn, those whose last attempt failed at the end. Each attempt
// has its own deadline, FetchTimeout on the allocator's clock, so a store that hangs
// holds the fetch up for one deadline and the next store is tried while ctx lasts.
// An unknown tag ends the fetch at once: it is a configuration error (every store
// must hold the tag), which trying the other stores does not fix.
func (a *Allocator) fetch(ctx context.Context) (*seg, error) {
	a.mu.Lock()
	plan := fetchPlan{size: a.nextStep(), high: a.high, order: a.order()}
	a.mu.Unlock()

	var errs []error
	for _, k := range plan.order {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("store %d of %d: not tried: %w", k+1, len(a.res), ctx.Err()))
			continue
		}
		b, err := a.attemptWithin(ctx, k, plan)
		if err == nil {
			return a.accept(k, b, len(plan.order) > 1), nil
		}
		if errors.Is(err, ErrUnknownTag) {
			return nil, fmt.Errorf("segment: store %d of %d: %w", k+1, len(a.res), err)
		}
		err = fmt.Errorf("store %d of %d: %w", k+1, len(a.res), err)
		errs = append(errs, err)
		a.markDown(ctx, k, err, len(plan.order) > 1)
	}
	return nil, a.failed(errs)
}

// attemptWithin runs attempt on store k under its own FetchTimeout, and says so in
// the error when that deadline (not ctx) ended it.
func (a *Allocator) attemptWithin(ctx context.Context, k int, plan fetchPlan) (Block, error) {
	actx, cancel := clock.WithTimeout(ctx, a.clk, a.opts.FetchTimeout)
	defer cancel()
	b, err := a.attempt(actx, k, plan.size, plan.high)
	if err != nil && !errors.Is(err, ErrUnknownTag) && actx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("no answer within %v (FetchTimeout): %w", a.opts.FetchTimeout, err)
	}
	return b, err
}

// markDown records that store k failed, so later fetches try it after the others,
// and logs the first failure in a row (with several stores; a store OpenStores could
// not open was reported there already). A failure because ctx ended says nothing
// about the store.
func (a *Allocator) markDown(ctx context.Context, k int, err error, several bool) {
	a.mu.Lock()
	newly := !a.down[k] && ctx.Err() == nil
	if newly {
		a.down[k] = true
	}
	a.mu.Unlock()
	if newly && several && !errors.Is(err, ErrNotOpen) {
		a.log.Warn("segment: a store failed; trying the next one", "tag", a.opts.Tag, "err", err)
	}
}

// accept turns block b of store k into the range to serve and records it: the new
// highest ID, the preferred store, and the step the next fresh range starts from (a
// handed-back block says nothing about the rate, so it leaves the step alone).
func (a *Allocator) accept(k int, b Block, several bool) *seg {
	s := &seg{first: b.First, last: b.Last, mul: a.n, add: a.res[k], store: k}
	s.pos.Store(b.First - 1)
	// The taker of this counter value starts the prefetch of the next range.
	s.trigger = b.First + int64(math.Ceil(float64(b.Len())*a.opts.Prefetch)) - 1
	a.mu.Lock()
	if id := s.id(b.Last); id > a.high {
		a.high = id
	}
	back := a.down[k]
	a.down[k] = false
	a.pref = k
	a.lastStore = k
	a.fetches++
	if b.Returned {
		a.claimed++
	}
	if b.Step > 0 {
		a.minStep = b.Step
	}
	if !b.Returned {
		a.step = b.Len()
	}
	a.lastFetch = a.clk.Now()
	a.lastOK = time.Unix(0, a.lastFetch)
	a.mu.Unlock()
	if back && several {
		a.log.Info("segment: a store answers again", "tag", a.opts.Tag, "store", k+1)
	}
	return s
}

// failed counts a fetch in which no store handed out a range and returns its error:
// ErrExhausted when every store is exhausted (nothing but a new tag helps), else
// every store's error.
func (a *Allocator) failed(errs []error) error {
	a.mu.Lock()
	a.failures++
	a.mu.Unlock()
	err := errors.Join(errs...)
	allExhausted := len(errs) == len(a.opts.Stores)
	for _, e := range errs {
		if !errors.Is(e, ErrExhausted) {
			allExhausted = false
		}
	}
	if allExhausted {
		return fmt.Errorf("segment: tag %q: every store is exhausted; move to a new tag: %w", a.opts.Tag, err)
	}
	return fmt.Errorf("segment: tag %q: no store hands out a range: %w", a.opts.Tag, err)
}

// order returns the stores in the order a fetch tries them: the preferred one and
// those after it in turn, with the stores whose last attempt failed moved to the
// end. a.mu must be held.
func (a *Allocator) order() []int {
	order := make([]int, 0, len(a.opts.Stores))
	for _, wantDown := range []bool{false, true} {
		for i := range a.opts.Stores {
			if k := (a.pref + i) % len(a.opts.Stores); a.down[k] == wantDown {
				order = append(order, k)
			}
		}
	}
	return order
}

// attempt takes a range of size counter values (stepFromStore: the tag's
// configured step) from store k, whose IDs are all above high.
func (a *Allocator) attempt(ctx context.Context, k int, size int64, high flurry.ID) (Block, error) {
	st := a.opts.Stores[k]
	if size == stepFromStore {
		// The store reports the configured step only in listings and with each block.
		var err error
		if size, err = a.configuredStep(ctx, st); err != nil {
			return Block{}, err
		}
	}
	return st.Take(ctx, a.opts.Tag, size, a.floorFor(high), a.limitFor(k))
}

// configuredStep reads the tag's configured step from a store's listing.
func (a *Allocator) configuredStep(ctx context.Context, st Store) (int64, error) {
	tags, err := st.Tags(ctx)
	if err != nil {
		return 0, err
	}
	for _, t := range tags {
		if t.Name == a.opts.Tag {
			return max(t.Step, 1), nil
		}
	}
	return 0, fmt.Errorf("%w %q: create it first (flurry segment create URL %s)", ErrUnknownTag, a.opts.Tag, a.opts.Tag)
}

// nextStep applies Leaf's dynamic step and the runway to the step of the last fresh
// range. a.mu must be held.
func (a *Allocator) nextStep() int64 {
	step := a.step
	if a.lastFetch == 0 || step == 0 {
		// The first fetch, or none fresh yet: the tag's configured step, looked up
		// in the store while no block has reported it.
		if a.minStep == 0 {
			return stepFromStore
		}
		return a.minStep
	}
	el := time.Duration(a.clk.Now() - a.lastFetch)
	switch {
	case el < a.opts.Target:
		if step <= a.opts.MaxStep/2 {
			step *= 2
		} else if step < a.opts.MaxStep {
			step = a.opts.MaxStep
		}
	case el >= 2*a.opts.Target:
		step /= 2
	}
	if step < a.minStep {
		step = a.minStep
	}
	if a.opts.Runway > 0 && a.rate > 0 {
		need := a.rate * a.opts.Runway.Seconds()
		var left int64
		if s := a.cur.Load(); s != nil {
			left = s.last - min(s.pos.Load(), s.last)
		}
		if want := need - float64(left); want > float64(step) {
			step = int64(math.Min(math.Ceil(want), MaxStep))
		}
	}
	if step < 1 {
		step = 1
	}
	return step
}

// Stats describes an Allocator's buffers, for metrics and dashboards.
type Stats struct {
	Tag string
	// Current is the ID range being served (first and last ID), and Issued how
	// many of its IDs are handed out.
	CurrentFirst, CurrentLast flurry.ID
	Issued                    int64
	// NextReady reports whether the next range is buffered; NextFirst and NextLast
	// are its IDs.
	NextReady           bool
	NextFirst, NextLast flurry.ID
	// Buffered is how many IDs can be served without any store: what is left of the
	// current range plus the next range.
	Buffered int64
	// Rate is the recent rate in IDs per second (0 until a range was used up), and
	// Runway how long Buffered lasts at that rate (0 when the rate is unknown).
	Rate   float64
	Runway time.Duration
	// Step is the step the next fresh range will be asked with (before the runway
	// and the dynamic rule adjust it again); MinStep is the tag's configured step.
	Step, MinStep int64
	// Store is the index in Options.Stores of the store that gave the last range.
	Store int
	// Fetches counts ranges taken, Claimed those that were handed-back ranges,
	// Failures fetch attempts where no store answered.
	Fetches, Claimed, Failures int64
	// LastFetch is when the last range was taken; Err is the last fetch's error, nil
	// when it succeeded.
	LastFetch time.Time
	Err       error
}

// Stats returns the allocator's current state.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.cur.Load()
	pos := min(s.pos.Load(), s.last)
	st := Stats{
		Tag:          a.opts.Tag,
		CurrentFirst: s.id(s.first),
		CurrentLast:  s.id(s.last),
		Issued:       pos - s.first + 1,
		Buffered:     s.last - pos,
		Rate:         a.rate,
		Step:         a.step,
		MinStep:      a.minStep,
		Store:        a.lastStore,
		Fetches:      a.fetches,
		Claimed:      a.claimed,
		Failures:     a.failures,
		LastFetch:    a.lastOK,
		Err:          a.fetchErr,
	}
	if st.Step == 0 {
		// No fresh range yet (none, or only handed-back ones after a restart): the
		// next fresh one is asked with the configured step (see nextStep).
		st.Step = a.minStep
	}
	if a.permErr != nil {
		st.Err = a.permErr
	}
	if nx := a.next; nx != nil {
		st.NextReady = true
		st.NextFirst, st.NextLast = nx.id(nx.first), nx.id(nx.last)
		st.Buffered += nx.last - nx.first + 1
	}
	if a.rate > 0 {
		st.Runway = time.Duration(float64(st.Buffered) / a.rate * 1e9)
	}
	return st
}

// Close stops the allocator and hands the unused rest of its ranges back to their
// stores, so that the next allocator of the tag claims them first and a graceful
// restart loses no ID. Next returns ErrClosed afterwards. Close does not close the
// stores. It returns the stores' errors; values whose return failed are lost, never
// handed out twice.
func (a *Allocator) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.broadcast()
	a.mu.Unlock()
	close(a.done)
	a.cancel()
	a.fetcher.Wait()

	var errs []error
	give := func(store int, first, last int64) {
		if first > last {
			return
		}
		b := Block{First: first, Last: last}
		if err := a.opts.Stores[store].Return(ctx, a.opts.Tag, b); err != nil {
			errs = append(errs, fmt.Errorf("segment: tag %q: returning %d unused values to store %d: %w", a.opts.Tag, b.Len(), store+1, err))
		}
	}
	s := a.cur.Load()
	// After the swap every Next finds s used up and sees closed.
	if old := s.pos.Swap(s.last); old < s.last {
		give(s.store, old+1, s.last)
	}
	a.mu.Lock()
	nx := a.next
	a.next = nil
	a.mu.Unlock()
	if nx != nil {
		give(nx.store, nx.first, nx.last)
	}
	return errors.Join(errs...)
}
