package redisstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Renewals that arrive together are sent together: a renewal made while another is
// running waits in a queue, and each of a few senders takes every renewal queued
// when it is free and sends them in one pipeline, one round trip and one write of
// the socket for all; a renewal made alone is sent at once. A process of
// 10,000 sessions renews 5,000 times a second; sent one by one, each renewal costs
// a round trip, a pooled connection and the scheduling of the goroutine that waits
// on it, and on a busy machine the renewals queued for a connection waited past
// their deadline while Redis itself was mostly idle. Each renewal still runs its
// own script and gets its own reply: a lost lease is reported to its holder only.
const (
	batchSenders = 4
	maxBatch     = 512
)

// renewal is one Renew waiting in the queue.
type renewal struct {
	keys     []string
	args     []any
	deadline time.Time // zero: none
	done     chan renewed
}

type renewed struct {
	res any
	err error
}

// batcher sends the queued renewals of a store.
type batcher struct {
	client redis.UniversalClient
	script *redis.Script
	queue  chan *renewal
	// inflight counts the renewals running: one alone is sent at once, on its
	// own, as it was before batching, so that a lone renewal costs no hand-over
	// and meets a silent connection exactly as any other call does.
	inflight atomic.Int64
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
}

func newBatcher(client redis.UniversalClient, script *redis.Script) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &batcher{client: client, script: script, queue: make(chan *renewal, maxBatch), ctx: ctx, cancel: cancel}
}

// errClosed is returned by a renewal queued after Close.
var errClosed = errors.New("the store is closed")

// run queues a renewal and waits for its reply, or for ctx to end.
func (b *batcher) run(ctx context.Context, keys []string, args []any) (any, error) {
	if b.ctx.Err() != nil {
		return nil, errClosed
	}
	defer b.inflight.Add(-1)
	if b.inflight.Add(1) == 1 {
		return b.script.Run(ctx, b.client, keys, args...).Result()
	}
	b.once.Do(func() {
		for range batchSenders {
			go b.send()
		}
	})
	r := &renewal{keys: keys, args: args, done: make(chan renewed, 1)}
	r.deadline, _ = ctx.Deadline()
	select {
	case b.queue <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.ctx.Done():
		return nil, errClosed
	}
	select {
	case x := <-r.done:
		return x.res, x.err
	case <-ctx.Done():
		// The reply, when it comes, lands in r.done's buffer and is dropped; the
		// script may have run, as with any call whose answer did not come.
		return nil, ctx.Err()
	}
}

// send takes the renewals queued, up to maxBatch, and sends them in one pipeline.
func (b *batcher) send() {
	batch := make([]*renewal, 0, maxBatch)
	cmds := make([]*redis.Cmd, 0, maxBatch)
	for {
		batch, cmds = batch[:0], cmds[:0]
		select {
		case r := <-b.queue:
			batch = append(batch, r)
		case <-b.ctx.Done():
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-b.queue:
				batch = append(batch, r)
			default:
				break more
			}
		}
		// The pipeline is bounded by the latest deadline of its renewals: a
		// caller whose own deadline passed has stopped waiting already.
		ctx, cancel := b.ctx, context.CancelFunc(func() {})
		var last time.Time
		for _, r := range batch {
			if r.deadline.IsZero() {
				last = time.Time{}
				break
			}
			if r.deadline.After(last) {
				last = r.deadline
			}
		}
		if !last.IsZero() {
			ctx, cancel = context.WithDeadline(b.ctx, last)
		}
		pipe := b.client.Pipeline()
		for _, r := range batch {
			cmds = append(cmds, b.script.EvalSha(ctx, pipe, r.keys, r.args...))
		}
		pipe.Exec(ctx) // each command's own error is read below
		for i, r := range batch {
			res, err := cmds[i].Result()
			if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
				// The server lost its scripts (a restart, SCRIPT FLUSH): Run loads
				// the script again with EVAL.
				res, err = b.script.Run(ctx, b.client, r.keys, r.args...).Result()
			}
			r.done <- renewed{res, err}
		}
		cancel()
	}
}

// close stops the senders; renewals queued later fail.
func (b *batcher) close() { b.cancel() }
