package client

import (
	"context"
	"fmt"
	"sync"
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
// and refills itself with one request in flight at a time.
type buffer[T int64 | string] struct {
	c    *Client
	ns   *Namespace
	take func(*flurryv1.NextResponse) ([]T, error)

	mu      sync.Mutex
	cur     []T   // the batch being handed out
	pos     int   // cur[pos:] is left
	queue   [][]T // further batches, oldest first
	queued  int   // IDs in queue
	fetch   *fetch
	retryAt time.Time // after a failed refill, no prefetch before then
	closed  bool
}

// fetch is one refill in flight; done closes when it has delivered or failed.
type fetch struct {
	done chan struct{}
	err  error
}

func newBuffer[T int64 | string](c *Client, ns *Namespace, take func(*flurryv1.NextResponse) ([]T, error)) *buffer[T] {
	return &buffer[T]{c: c, ns: ns, take: take}
}

// next hands out the oldest buffered ID. The common case takes the lock, an element
// and a comparison with the low-water mark, and allocates nothing.
func (b *buffer[T]) next(ctx context.Context) (T, error) {
	b.mu.Lock()
	if b.pos < len(b.cur) {
		v := b.cur[b.pos]
		b.pos++
		if b.fetch == nil && len(b.cur)-b.pos+b.queued < b.c.low {
			b.prefetch()
		}
		b.mu.Unlock()
		return v, nil
	}
	return b.slow(ctx)
}

// slow is next when the current batch is used up. b.mu is held on entry and
// released on return.
func (b *buffer[T]) slow(ctx context.Context) (T, error) {
	var zero T
	for {
		if b.closed {
			b.mu.Unlock()
			return zero, ErrClosed
		}
		if len(b.queue) > 0 {
			b.cur, b.pos = b.queue[0], 0
			b.queue[0] = nil
			b.queue = b.queue[1:]
			b.queued -= len(b.cur)
			if b.pos < len(b.cur) {
				v := b.cur[b.pos]
				b.pos++
				if b.fetch == nil && len(b.cur)-b.pos+b.queued < b.c.low {
					b.prefetch()
				}
				b.mu.Unlock()
				return v, nil
			}
			continue
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
		b.mu.Lock()
		if f.err != nil && b.pos >= len(b.cur) && len(b.queue) == 0 {
			b.mu.Unlock()
			return zero, f.err
		}
	}
}

// prefetch starts a background refill unless the last one failed less than a
// backoff ago. b.mu is held.
func (b *buffer[T]) prefetch() {
	if b.closed || (!b.retryAt.IsZero() && time.Now().Before(b.retryAt)) {
		return
	}
	b.start()
}

// start starts a refill. b.mu is held, b.fetch is nil and b is not closed.
func (b *buffer[T]) start() *fetch {
	f := &fetch{done: make(chan struct{})}
	b.fetch = f
	b.c.wg.Go(func() { b.run(f) })
	return f
}

// run fetches batches until the buffer is at or above the low-water mark, or a
// fetch fails. Each batch wakes the callers waiting for it.
func (b *buffer[T]) run(f *fetch) {
	for {
		var vals []T
		_, err := b.c.nextRPC(b.c.ctx, b.ns.name, b.c.batch, func(m *flurryv1.NextResponse) error {
			var err error
			vals, err = b.take(m)
			return err
		})
		b.mu.Lock()
		if err != nil {
			if b.c.ctx.Err() != nil {
				err = ErrClosed
			}
			f.err = err
			b.retryAt = time.Now().Add(b.c.backoff)
			b.fetch = nil
			close(f.done)
			b.mu.Unlock()
			return
		}
		b.retryAt = time.Time{}
		if !b.closed {
			b.queue = append(b.queue, vals)
			b.queued += len(vals)
		}
		close(f.done)
		if b.closed || len(b.cur)-b.pos+b.queued >= b.c.low {
			b.fetch = nil
			b.mu.Unlock()
			return
		}
		f = &fetch{done: make(chan struct{})}
		b.fetch = f
		b.mu.Unlock()
	}
}

// close drops the buffered IDs; calls of next from then on return ErrClosed.
func (b *buffer[T]) close() {
	b.mu.Lock()
	b.closed = true
	b.cur, b.pos, b.queue, b.queued = nil, 0, nil, 0
	b.mu.Unlock()
}

func (b *buffer[T]) buffered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.cur) - b.pos + b.queued
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
