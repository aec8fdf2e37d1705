package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry"
	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

// Namespace is the handle of one namespace of a Client: its Next skips the lookup by
// name that Client.Next does. Get it from Client.Namespace; it is safe for
// concurrent use and valid until the Client is closed.
type Namespace struct {
	name  string
	ints  *buffer[int64]
	texts *buffer[string]
}

// Name returns the namespace's name.
func (ns *Namespace) Name() string { return ns.name }

// Next is Client.Next for this namespace.
func (ns *Namespace) Next(ctx context.Context) (flurry.ID, error) {
	v, err := ns.ints.next(ctx)
	return flurry.ID(v), err
}

// NextText is Client.NextText for this namespace.
func (ns *Namespace) NextText(ctx context.Context) (string, error) { return ns.texts.next(ctx) }

// Buffered returns how many IDs the namespace's buffers hold now.
func (ns *Namespace) Buffered() int { return ns.ints.buffered() + ns.texts.buffered() }

// buffer holds fetched IDs of one namespace and one kind, in the order received,
// and refills itself with one refill in flight at a time (its requests may be
// hedged: only the winner's IDs reach the buffer).
//
// The batch being handed out is reached through an atomic pointer and handed out
// by an atomic counter, so the common case of next takes no lock: one atomic add,
// one bounds check and one comparison with the batch's refill trigger. Everything
// else (the queue of further batches, the refill in flight, closing) is under mu.
type buffer[T int64 | string] struct {
	c    *Client
	ns   *Namespace
	take func(*flurryv1.NextResponse) ([]T, error)

	cur      atomic.Pointer[batch[T]] // the batch being handed out; nil before the first and after Close
	inflight atomic.Bool              // a refill is running (mirrors fetch != nil)

	mu      sync.Mutex
	queue   [][]T // further batches, oldest first
	queued  int   // IDs in queue
	fetch   *fetch
	retryAt time.Time // after a failed refill, no prefetch before then
	closed  bool

	// Refill sizing (see tune). low is the low-water mark in force and size the
	// count the next request asks for; both start at the Client's and move only
	// when the Options left them at zero.
	low, size int
	maxSize   int       // the largest count to ask for; lowered when a server refuses one
	got       int64     // IDs received in all, for the drain rate
	lastAt    time.Time // when tune last ran
	lastUsed  int64     // IDs handed out then (got - remaining)
	rate      float64   // IDs handed out per second, smoothed
	rtt       float64   // seconds per request, smoothed
}

// batch is one response's IDs and how far they have been handed out.
type batch[T int64 | string] struct {
	vals []T
	pos  atomic.Int64 // the next index to hand out; it passes len(vals) once used up
	// trigger is the index at which fewer than the low-water mark of IDs are left
	// in the whole buffer: the caller that takes it, or any later one while no
	// refill runs, starts one.
	trigger atomic.Int64
}

// fetch is one refill in flight; done closes when it has delivered or failed.
type fetch struct {
	done chan struct{}
	err  error
}

func newBuffer[T int64 | string](c *Client, ns *Namespace, take func(*flurryv1.NextResponse) ([]T, error)) *buffer[T] {
	return &buffer[T]{c: c, ns: ns, take: take, low: c.low, size: c.batch, maxSize: c.maxBatch}
}

// Adaptive sizing. With Options.Batch zero a request asks for enough IDs to last
// about sizeFor at the measured drain rate, between DefaultBatch and maxBatch
// (the servers' default max_count). With Options.LowWater zero the low-water mark
// is the IDs drained in lowRTTs round trips, and at least half a request: a
// consumer faster than one request per round trip then keeps the one request in
// flight back to back, more than one batch ahead, instead of waiting for each.
const (
	sizeFor  = 5 * time.Millisecond
	lowRTTs  = 3
	maxBatch = 100_000
	// rateSpan: a drain-rate sample over at least this long replaces the
	// smoothed rate instead of being averaged in.
	rateSpan = 100 * time.Millisecond
	// rateAlpha is the weight of the newest drain-rate and round-trip samples.
	rateAlpha = 0.5
)

// tune measures the drain rate since it last ran and sets size and low for the
// next request. b.mu is held.
func (b *buffer[T]) tune(now time.Time) {
	used := b.got - int64(b.remaining())
	if !b.lastAt.IsZero() {
		if dt := now.Sub(b.lastAt).Seconds(); dt > 0 {
			r := float64(used-b.lastUsed) / dt
			if b.rate == 0 || dt >= rateSpan.Seconds() {
				// A sample over a long span is an average already, and the
				// rate of an hour ago says nothing about now.
				b.rate = r
			} else {
				b.rate = rateAlpha*r + (1-rateAlpha)*b.rate
			}
		}
	}
	b.lastAt, b.lastUsed = now, used
	if b.c.autoBatch {
		n := int(b.rate * sizeFor.Seconds())
		b.size = min(max(n, DefaultBatch), b.maxSize)
	}
	if b.c.autoLow {
		low := max(b.size/2, int(b.rate*b.rtt*lowRTTs))
		// Never more than a few requests ahead: a stall of the consumer's clock
		// (a suspended VM) must not make the buffer huge.
		b.low = min(low, 4*b.size)
		if cb := b.cur.Load(); cb != nil {
			cb.trigger.Store(int64(len(cb.vals) + b.queued - b.low))
		}
	}
}

// measured records one request's round trip. b.mu is held.
func (b *buffer[T]) measured(d time.Duration) {
	if b.rtt == 0 {
		b.rtt = d.Seconds()
	} else {
		b.rtt = rateAlpha*d.Seconds() + (1-rateAlpha)*b.rtt
	}
}

// next hands out the oldest buffered ID. The common case allocates nothing and
// takes no lock.
func (b *buffer[T]) next(ctx context.Context) (T, error) {
	if cb := b.cur.Load(); cb != nil {
		if i := cb.pos.Add(1) - 1; i < int64(len(cb.vals)) {
			if i >= cb.trigger.Load() && !b.inflight.Load() {
				b.lowWater()
			}
			return cb.vals[i], nil
		}
	}
	return b.slow(ctx)
}

// slow is next when the current batch is used up: it moves to the next batch in
// the queue, or waits for a refill, starting one if none runs.
func (b *buffer[T]) slow(ctx context.Context) (T, error) {
	var zero T
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return zero, ErrClosed
		}
		cb := b.cur.Load()
		if cb == nil || cb.pos.Load() >= int64(len(cb.vals)) {
			if len(b.queue) > 0 {
				b.install()
				cb = nil
			}
		}
		if cb = b.cur.Load(); cb != nil && cb.pos.Load() < int64(len(cb.vals)) {
			b.mu.Unlock()
			if i := cb.pos.Add(1) - 1; i < int64(len(cb.vals)) {
				if i >= cb.trigger.Load() && !b.inflight.Load() {
					b.lowWater()
				}
				return cb.vals[i], nil
			}
			continue // others took the rest first
		}
		f := b.fetch
		if f == nil {
			f = b.start() // the caller waits anyway: no backoff
		}
		b.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return zero, fmt.Errorf("client: namespace %q: waiting for a refill: %w", b.ns.name, context.Cause(ctx))
		}
		if f.err != nil && b.empty() {
			return zero, f.err
		}
	}
}

// install makes the oldest queued batch the current one. b.mu is held and the
// queue is not empty.
func (b *buffer[T]) install() {
	vals := b.queue[0]
	b.queue[0] = nil
	b.queue = b.queue[1:]
	b.queued -= len(vals)
	nb := &batch[T]{vals: vals}
	nb.trigger.Store(int64(len(vals) + b.queued - b.low))
	b.cur.Store(nb)
}

// remaining returns how many IDs are buffered. b.mu is held.
func (b *buffer[T]) remaining() int {
	n := b.queued
	if cb := b.cur.Load(); cb != nil {
		n += len(cb.vals) - int(min(cb.pos.Load(), int64(len(cb.vals))))
	}
	return n
}

func (b *buffer[T]) empty() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remaining() == 0
}

// lowWater starts a background refill when the buffer is below the low-water mark,
// none runs, and the last one did not fail less than a backoff ago.
func (b *buffer[T]) lowWater() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.fetch != nil || b.remaining() >= b.low {
		return
	}
	if !b.retryAt.IsZero() && time.Now().Before(b.retryAt) {
		return
	}
	b.start()
}

// start starts a refill. b.mu is held, b.fetch is nil and b is not closed.
func (b *buffer[T]) start() *fetch {
	f := &fetch{done: make(chan struct{})}
	b.fetch = f
	b.inflight.Store(true)
	b.tune(time.Now())
	size := b.size
	b.c.wg.Go(func() { b.run(f, size) })
	return f
}

// run fetches batches until the buffer is at or above the low-water mark, or a
// fetch fails. Each batch wakes the callers waiting for it.
func (b *buffer[T]) run(f *fetch, size int) {
	for {
		t0 := time.Now()
		vals, err := nextRPC(b.c, b.c.ctx, b.ns.name, size, b.take)
		b.mu.Lock()
		if err != nil && size > DefaultBatch && size > b.c.batch && errors.Is(err, ErrInvalidArgument) && b.c.ctx.Err() == nil {
			// A grown request above the server's max_count: ask for less from
			// now on, and at once.
			b.maxSize = max(size/2, DefaultBatch)
			b.size = min(b.size, b.maxSize)
			size = b.size
			b.mu.Unlock()
			continue
		}
		if err != nil {
			if b.c.ctx.Err() != nil {
				err = ErrClosed
			}
			f.err = err
			b.retryAt = time.Now().Add(b.c.backoff)
			b.finish(f)
			return
		}
		b.retryAt = time.Time{}
		if b.closed {
			b.finish(f)
			return
		}
		now := time.Now()
		b.measured(now.Sub(t0))
		b.queue = append(b.queue, vals)
		b.queued += len(vals)
		b.got += int64(len(vals))
		b.tune(now)
		size = b.size
		if cb := b.cur.Load(); cb != nil {
			// The current batch's trigger moves up by the IDs just queued.
			cb.trigger.Store(int64(len(cb.vals) + b.queued - b.low))
		}
		close(f.done)
		if b.remaining() >= b.low {
			b.fetch = nil
			b.inflight.Store(false)
			b.mu.Unlock()
			// A caller may have passed the new trigger while the lock was held.
			if cb := b.cur.Load(); cb != nil && cb.pos.Load() >= cb.trigger.Load() {
				b.lowWater()
			}
			return
		}
		f = &fetch{done: make(chan struct{})}
		b.fetch = f
		b.mu.Unlock()
	}
}

// finish ends a refill: b.mu is held on entry and released.
func (b *buffer[T]) finish(f *fetch) {
	b.fetch = nil
	b.inflight.Store(false)
	close(f.done)
	b.mu.Unlock()
}

// close drops the buffered IDs; calls of next from then on return ErrClosed (a
// call racing with Close may still return an ID of the dropped batch, never one
// returned before).
func (b *buffer[T]) close() {
	b.mu.Lock()
	b.closed = true
	b.cur.Store(nil)
	b.queue, b.queued = nil, 0
	b.mu.Unlock()
}

func (b *buffer[T]) buffered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remaining()
}

// takeInts returns a response's integer IDs, or a wrongKind error.
func takeInts(m *flurryv1.NextResponse) ([]int64, error) {
	if len(m.Ids) == 0 {
		return nil, &wrongKind{msg: "the namespace issues text IDs"}
	}
	return m.Ids, nil
}

// takeTexts returns a response's text IDs, or a wrongKind error.
func takeTexts(m *flurryv1.NextResponse) ([]string, error) {
	if len(m.TextIds) == 0 {
		return nil, &wrongKind{msg: "the namespace issues integer IDs"}
	}
	return m.TextIds, nil
}
