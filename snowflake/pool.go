package snowflake

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
)

// topUpEvery is how often an idle pool's refiller tops it up to full.
const topUpEvery = 100 * time.Millisecond

// PoolOptions configures a Pool. The zero PoolOptions is valid.
type PoolOptions struct {
	// Size is how many IDs the pool holds when full: a power of two. Zero means 8192,
	// the pool size game servers commonly use.
	Size int
	// LowWater is the level below which a take wakes the refiller. Zero means half of
	// Size.
	LowWater int
	// Batch is how many IDs the refiller takes from the generator at once. Zero means
	// 256.
	Batch int
}

// Pool hands out IDs made ahead of time by a generator, as game servers' UUID pools and
// uid-generator's CachedUidGenerator do: a ring buffer that a background goroutine
// refills whenever it falls below LowWater, and tops up to full every 100 ms. It
// absorbs bursts above the layout's per-tick cap with IDs made earlier, while the
// load was lower.
//
// Next takes from the ring with one compare-and-swap and never waits on a lock. When
// the ring is empty it does not fail (uid-generator's "Rejected take buffer", its
// issue #90): it takes an ID from the generator directly. IDs stay unique and
// increasing in the order Next returns them: an ID the refiller made before a direct
// one but stored after it is skipped, never handed out out of order.
//
// A pool's IDs carry the time they were made, which can be earlier than the time they
// are handed out: at most the time it takes to drain a full pool.
type Pool struct {
	g        *Generator
	ring     []atomic.Int64
	mask     uint64
	lowWater uint64
	batch    int

	_    [64]byte
	head atomic.Uint64 // next slot to take; written by takers
	_    [56]byte
	tail atomic.Uint64 // next slot to fill; written by the refiller only
	_    [56]byte

	floor   atomic.Int64 // largest ID handed out directly; ring IDs below it are stale
	wanted  atomic.Bool  // a wake-up is pending, so takers need not send another
	wake    chan struct{}
	closed  atomic.Bool
	stop    context.CancelFunc
	wg      sync.WaitGroup
	lastErr atomic.Pointer[error]

	direct  atomic.Int64
	skipped atomic.Int64
}

// NewPool starts a pool over g and fills it in the background. The pool does not own
// g: Close the pool, then the generator. Use only the pool to issue from g while the
// pool is open, or IDs handed out may not be in increasing order.
func NewPool(g *Generator, opts PoolOptions) (*Pool, error) {
	size := opts.Size
	if size == 0 {
		size = 8192
	}
	if size < 2 || size&(size-1) != 0 || size > 1<<24 {
		return nil, fmt.Errorf("snowflake: pool Size %d must be a power of two from 2 to 16777216", opts.Size)
	}
	low := opts.LowWater
	if low == 0 {
		low = size / 2
	}
	if low < 1 || low > size {
		return nil, fmt.Errorf("snowflake: pool LowWater %d must be from 1 to Size (%d)", opts.LowWater, size)
	}
	batch := opts.Batch
	if batch == 0 {
		batch = 256
	}
	if batch < 1 {
		return nil, fmt.Errorf("snowflake: pool Batch %d must be positive", opts.Batch)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		g:        g,
		ring:     make([]atomic.Int64, size),
		mask:     uint64(size - 1),
		lowWater: uint64(low),
		batch:    min(batch, size),
		wake:     make(chan struct{}, 1),
		stop:     cancel,
	}
	p.floor.Store(-1)
	p.wanted.Store(true)
	p.wake <- struct{}{}
	p.wg.Add(1)
	go p.refill(ctx)
	return p, nil
}

// Next returns an ID from the pool, or from the generator when the pool is empty.
func (p *Pool) Next(ctx context.Context) (flurry.ID, error) {
	for {
		if p.closed.Load() {
			return 0, ErrClosed
		}
		h := p.head.Load()
		t := p.tail.Load()
		if h == t {
			return p.takeDirect(ctx)
		}
		v := p.ring[h&p.mask].Load()
		if !p.head.CompareAndSwap(h, h+1) {
			continue
		}
		if t-h-1 < p.lowWater && !p.wanted.Load() {
			p.signal()
		}
		if v <= p.floor.Load() {
			p.skipped.Add(1)
			continue
		}
		return flurry.ID(v), nil
	}
}

func (p *Pool) takeDirect(ctx context.Context) (flurry.ID, error) {
	p.signal()
	id, err := p.g.Next(ctx)
	if err != nil {
		return 0, err
	}
	p.direct.Add(1)
	for {
		f := p.floor.Load()
		if int64(id) <= f || p.floor.CompareAndSwap(f, int64(id)) {
			return id, nil
		}
	}
}

func (p *Pool) signal() {
	if p.wanted.CompareAndSwap(false, true) {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *Pool) refill(ctx context.Context) {
	defer p.wg.Done()
	buf := make([]flurry.ID, p.batch)
	// Besides the wake-ups from takers below LowWater, top up every topUpEvery, so a
	// pool left between LowWater and full after a burst fills up again while idle.
	tick := time.NewTicker(topUpEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-tick.C:
			if p.Level() == len(p.ring) {
				continue
			}
		}
		p.wanted.Store(false)
		for {
			t := p.tail.Load()
			free := int(uint64(len(p.ring)) - (t - p.head.Load()))
			if free <= 0 {
				break
			}
			n, err := p.g.NextN(ctx, buf[:min(free, len(buf))])
			for i := 0; i < n; i++ {
				p.ring[(t+uint64(i))&p.mask].Store(int64(buf[i]))
			}
			p.tail.Store(t + uint64(n))
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				stored := err // a copy, so err does not escape on every batch
				p.lastErr.Store(&stored)
				// The generator refuses for now (clock behind, exhausted): takers get
				// the error from it directly; try again a little later.
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
				break
			}
		}
	}
}

// Level returns how many IDs are ready in the pool.
func (p *Pool) Level() int { return int(p.tail.Load() - p.head.Load()) }

// PoolStats describes a pool.
type PoolStats struct {
	Level, Size int
	// Direct counts IDs taken from the generator because the pool was empty; Skipped
	// counts pooled IDs dropped because a direct ID larger than them was already out.
	Direct, Skipped int64
	// LastRefillError is the last error the refiller got from the generator, or nil.
	LastRefillError error
}

// Stats returns the pool's level and counters.
func (p *Pool) Stats() PoolStats {
	s := PoolStats{Level: p.Level(), Size: len(p.ring), Direct: p.direct.Load(), Skipped: p.skipped.Load()}
	if e := p.lastErr.Load(); e != nil {
		s.LastRefillError = *e
	}
	return s
}

// Close stops the refiller. The IDs left in the pool are dropped, never reused. Later
// calls to Next return ErrClosed. Close is idempotent; it does not close the generator.
func (p *Pool) Close() error {
	if !p.closed.Swap(true) {
		p.stop()
		p.wg.Wait()
	}
	return nil
}
