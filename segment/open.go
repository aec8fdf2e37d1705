package segment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/storeurl"
)

// ErrNotOpen is returned by the calls of a store OpenStores could not open yet: it
// is being opened again in the background.
var ErrNotOpen = errors.New("segment: store not open yet")

// OpenOptions configures OpenStores. The zero value is usable.
type OpenOptions struct {
	// Timeout bounds each attempt at opening one store (connecting, creating the
	// tables, Prepare), measured on Clock. Zero means 5 s.
	Timeout time.Duration
	// RetryMax is the longest pause between attempts at opening a store that is
	// down; the pauses start at 100 ms and double. Zero means 5 s.
	RetryMax time.Duration
	// Prepare, when set, runs on each store once it is open and before anything
	// else uses it; flurry serve creates its tag there, so that a store that joins
	// late has the tag too. An error counts as a failed attempt: the store is closed
	// and opened again later.
	Prepare func(ctx context.Context, s Store) error
	// Clock measures Timeout and the pauses between attempts. Nil means
	// clock.NewSystem().
	Clock clock.Clock
	// Logger receives the stores that are down at the start and those that join
	// later. Nil means slog.Default().
	Logger *slog.Logger
}

const (
	defaultOpenTimeout  = 5 * time.Second
	defaultOpenRetryMax = 5 * time.Second
	openRetryMin        = 100 * time.Millisecond
)

// OpenStores opens the stores of an Allocator from their URLs with open (such as
// segmenturl.Open), so that the allocator can start while some of them are down.
//
// Every store gets one attempt, all at once, and OpenStores returns when each has
// ended; a store that hangs costs one Timeout. With a single URL it is open and
// Prepare, failing as they fail. With several it fails only when none opened. A
// store that did not open is returned at its place in the list (the residue classes
// of the others do not move) as a stand-in whose calls fail at once with an error
// wrapping ErrNotOpen while it is opened again in the background; once that
// succeeds, it serves like the others and the allocator uses it the next time it
// tries that store. Closing the stand-in stops the attempts.
func OpenStores(ctx context.Context, urls []string, open func(ctx context.Context, rawURL string) (Store, error), opts OpenOptions) ([]Store, error) {
	if len(urls) == 0 {
		return nil, errors.New("segment: no store URL given")
	}
	if opts.Timeout < 0 || opts.RetryMax < 0 {
		return nil, errors.New("segment: OpenOptions.Timeout and RetryMax must not be negative")
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultOpenTimeout
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = defaultOpenRetryMax
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewSystem()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(urls) == 1 {
		s, err := open(ctx, urls[0])
		if err != nil {
			return nil, err
		}
		if opts.Prepare != nil {
			if err := opts.Prepare(ctx, s); err != nil {
				s.Close()
				return nil, err
			}
		}
		return []Store{s}, nil
	}

	stores := make([]Store, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = openOne(ctx, u, open, opts)
		}()
	}
	wg.Wait()

	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("store %d of %d (%s): %w", i+1, len(urls), storeurl.Redact(urls[i]), err))
		}
	}
	if len(failed) == len(urls) || ctx.Err() != nil {
		for _, s := range stores {
			if s != nil {
				s.Close()
			}
		}
		return nil, fmt.Errorf("segment: none of the %d stores could be opened: %w", len(urls), errors.Join(failed...))
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		p := &pendingStore{
			url:  urls[i],
			name: fmt.Sprintf("store %d of %d (%s)", i+1, len(urls), storeurl.Redact(urls[i])),
			open: open, opts: opts, done: make(chan struct{}),
		}
		p.err.Store(&err)
		var bg context.Context
		bg, p.cancel = context.WithCancel(context.Background())
		opts.Logger.Warn("segment: a store is down; starting without it and opening it in the background",
			"store", p.name, "err", err)
		go p.reopen(bg)
		stores[i] = p
	}
	return stores, nil
}

// openOne makes one attempt at opening a store, within opts.Timeout.
func openOne(ctx context.Context, rawURL string, open func(context.Context, string) (Store, error), opts OpenOptions) (Store, error) {
	actx, cancel := clock.WithTimeout(ctx, opts.Clock, opts.Timeout)
	defer cancel()
	s, err := open(actx, rawURL)
	if err == nil && opts.Prepare != nil {
		if err = opts.Prepare(actx, s); err != nil {
			s.Close()
		}
	}
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			err = fmt.Errorf("no answer within %v: %w", opts.Timeout, err)
		}
		return nil, err
	}
	return s, nil
}

// pendingStore stands in for a store OpenStores could not open: its calls fail with
// ErrNotOpen until reopen opens the store, then go to it.
type pendingStore struct {
	url    string
	name   string // for messages: store 2 of 2 (url)
	open   func(context.Context, string) (Store, error)
	opts   OpenOptions
	cur    atomic.Pointer[storeBox] // the store, once open
	err    atomic.Pointer[error]    // the last attempt's error, until open
	cancel context.CancelFunc       // stops reopen
	done   chan struct{}            // closed when reopen has returned
	closed atomic.Bool
}

type storeBox struct{ Store }

// reopen tries to open the store, with growing pauses, until it succeeds or Close
// cancels ctx.
func (p *pendingStore) reopen(ctx context.Context) {
	defer close(p.done)
	pause := openRetryMin
	for {
		if p.opts.Clock.SleepUntil(ctx, p.opts.Clock.Now()+int64(pause)) != nil {
			return
		}
		s, err := openOne(ctx, p.url, p.open, p.opts)
		if err == nil {
			p.cur.Store(&storeBox{s})
			p.opts.Logger.Info("segment: a store that was down at the start is open; it serves from now on", "store", p.name)
			return
		}
		if ctx.Err() != nil {
			return
		}
		p.err.Store(&err)
		if pause *= 2; pause > p.opts.RetryMax {
			pause = p.opts.RetryMax
		}
	}
}

// store returns the opened store, or an error wrapping ErrNotOpen.
func (p *pendingStore) store() (Store, error) {
	if b := p.cur.Load(); b != nil {
		return b.Store, nil
	}
	return nil, fmt.Errorf("%w: %s: %w", ErrNotOpen, p.name, *p.err.Load())
}

func (p *pendingStore) Take(ctx context.Context, tag string, n, floor, limit int64) (Block, error) {
	s, err := p.store()
	if err != nil {
		return Block{}, err
	}
	return s.Take(ctx, tag, n, floor, limit)
}

func (p *pendingStore) Return(ctx context.Context, tag string, b Block) error {
	s, err := p.store()
	if err != nil {
		return err
	}
	return s.Return(ctx, tag, b)
}

func (p *pendingStore) Create(ctx context.Context, t Tag) error {
	s, err := p.store()
	if err != nil {
		return err
	}
	return s.Create(ctx, t)
}

func (p *pendingStore) SetStep(ctx context.Context, tag string, step int64) error {
	s, err := p.store()
	if err != nil {
		return err
	}
	return s.SetStep(ctx, tag, step)
}

func (p *pendingStore) Tags(ctx context.Context) ([]Tag, error) {
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	return s.Tags(ctx)
}

// Identity is the store's, once it opened; until then an error wrapping
// ErrNotOpen. A store without an Identity method is reported as such.
func (p *pendingStore) Identity(ctx context.Context) (StoreIdentity, error) {
	s, err := p.store()
	if err != nil {
		return StoreIdentity{}, err
	}
	id, ok := s.(Identifier)
	if !ok {
		return StoreIdentity{}, fmt.Errorf("segment: %s cannot name its data (no Identity method)", p.name)
	}
	return id.Identity(ctx)
}

// Close stops the attempts at opening the store and closes it if it opened.
func (p *pendingStore) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.cancel()
	<-p.done
	if b := p.cur.Load(); b != nil {
		return b.Store.Close()
	}
	return nil
}
