package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/lease"
)

// Renewals that arrive together are written together: a renewal made while another
// is running waits in a queue, and each of a few senders takes every renewal queued
// when it is free and writes them all with one statement in one transaction, so one
// commit (one WAL or redo-log flush) for all; a renewal made alone is written at
// once, as before. A process of 10,000 sessions renews 5,000 times a second, and one
// commit per renewal took more than its pool of connections could carry, while the
// database itself was nearly idle. Each row is still renewed by the same guarded
// write, on its own token and expiry: a lost lease is reported to its holder only.
const (
	batchSenders = 4
	// maxBatch bounds a batch: MySQL's SELECT of its rows takes 3 placeholders a
	// row, far below the limit of 65,535.
	maxBatch = 256
	// batchBound bounds the statements of one batch, as RequestTimeout's default
	// bounds a call.
	batchBound = 5 * time.Second
)

// renewal is one Renew waiting in the queue.
type renewal struct {
	l        lease.Lease
	ttl      int64 // milliseconds
	mark     int64
	deadline time.Time // zero: none
	done     chan renewed
}

type renewed struct {
	l   lease.Lease
	err error
}

// batcher writes the queued renewals of a store.
type batcher struct {
	s     *Store
	queue chan *renewal
	// inflight counts the renewals running: one alone is written at once, on its
	// own, with no hand-over to a sender.
	inflight atomic.Int64
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
}

func newBatcher(s *Store) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &batcher{s: s, queue: make(chan *renewal, maxBatch), ctx: ctx, cancel: cancel}
}

// errClosed is returned by a renewal queued after Close.
var errClosed = errors.New("the store is closed")

// run renews l, alone or in a batch, and waits for the outcome or for ctx to end.
// lost is the error it returns when the lease is not l's anymore.
func (b *batcher) run(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64, lost error) (lease.Lease, error) {
	if b.ctx.Err() != nil {
		return l, errClosed
	}
	defer b.inflight.Add(-1)
	if b.inflight.Add(1) == 1 {
		return b.s.renewOne(ctx, l, ttl, mark, lost)
	}
	b.once.Do(func() {
		for range batchSenders {
			go b.send()
		}
	})
	r := &renewal{l: l, ttl: ttl.Milliseconds(), mark: mark, done: make(chan renewed, 1)}
	r.deadline, _ = ctx.Deadline()
	select {
	case b.queue <- r:
	case <-ctx.Done():
		return l, ctx.Err()
	case <-b.ctx.Done():
		return l, errClosed
	}
	select {
	case x := <-r.done:
		if errors.Is(x.err, lease.ErrLost) {
			return l, lost
		}
		return x.l, x.err
	case <-ctx.Done():
		// The outcome, when it comes, lands in r.done's buffer and is dropped; the
		// row may have been renewed, as with any call whose answer did not come.
		return l, ctx.Err()
	}
}

// send takes the renewals queued, up to maxBatch, and writes them together.
func (b *batcher) send() {
	batch := make([]*renewal, 0, maxBatch)
	for {
		batch = batch[:0]
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
		b.write(batch)
	}
}

// write renews a batch: the renewals whose caller stopped waiting are left out, and
// a second renewal of one value waits for a batch of its own, so that each row of a
// statement has one renewal. The rows go in the primary key's order, so that two
// batches lock the rows they share in the same order.
func (b *batcher) write(batch []*renewal) {
	now := time.Now()
	live := batch[:0]
	for _, r := range batch {
		if !r.deadline.IsZero() && !r.deadline.After(now) {
			r.done <- renewed{r.l, context.DeadlineExceeded}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	slices.SortStableFunc(live, func(a, b *renewal) int {
		return cmp.Or(strings.Compare(a.l.Scope, b.l.Scope), cmp.Compare(a.l.Value, b.l.Value))
	})
	var again []*renewal
	rows := live[:1]
	for _, r := range live[1:] {
		if p := rows[len(rows)-1]; p.l.Scope == r.l.Scope && p.l.Value == r.l.Value {
			again = append(again, r)
			continue
		}
		rows = append(rows, r)
	}
	// The batch is bounded by batchBound, not by its renewals' deadlines: a
	// statement cut off when its callers stopped waiting would throw away the
	// renewals of all its rows, and their retries would come back to a busier
	// database. A caller that stopped waiting retries, and renews its row again.
	ctx, cancel := context.WithTimeout(b.ctx, batchBound)
	got, err := b.s.renewMany(ctx, rows)
	cancel()
	for _, r := range rows {
		switch out, ok := got[key{r.l.Scope, r.l.Value}]; {
		case err != nil:
			r.done <- renewed{r.l, err}
		case !ok:
			r.done <- renewed{r.l, lease.ErrLost}
		default:
			out.Token = r.l.Token
			r.done <- renewed{out, nil}
		}
	}
	if len(again) > 0 {
		b.write(again)
	}
}

// close stops the senders; renewals queued later fail.
func (b *batcher) close() { b.cancel() }

// key names a row.
type key struct {
	scope string
	value int64
}

// renewMany renews rows, at most one renewal per row, in one transaction, and
// returns the rows it renewed as leases (without their tokens); a row it did not
// renew was expired or not the caller's anymore.
func (s *Store) renewMany(ctx context.Context, rows []*renewal) (map[key]lease.Lease, error) {
	got := make(map[key]lease.Lease, len(rows))
	scan := func(rs *sql.Rows, want func(live int64) bool) error {
		defer rs.Close()
		for rs.Next() {
			var (
				l             lease.Lease
				expires, live int64
			)
			if err := rs.Scan(&l.Scope, &l.Value, &l.Owner, &expires, &l.Mark, &l.Epoch, &live); err != nil {
				return err
			}
			if want(live) {
				l.Expires = utcMs(expires)
				got[key{l.Scope, l.Value}] = l
			}
		}
		return rs.Err()
	}
	if s.Dialect() == Postgres {
		// One UPDATE ... FROM unnest(...) RETURNING: one statement, one commit.
		n := len(rows)
		scopes, values, tokens := make([]string, n), make([]int64, n), make([]string, n)
		ttls, marks := make([]int64, n), make([]int64, n)
		for i, r := range rows {
			scopes[i], values[i], tokens[i], ttls[i], marks[i] = r.l.Scope, r.l.Value, r.l.Token, r.ttl, r.mark
		}
		err := s.retry(ctx, func() error {
			clear(got)
			rs, err := s.h.DB.QueryContext(ctx, s.q.renewMany, scopes, values, tokens, ttls, marks)
			if err != nil {
				return err
			}
			return scan(rs, func(int64) bool { return true })
		})
		return got, err
	}
	// MySQL: each row's own UPDATE (the one a renewal alone runs), then one
	// SELECT that reads the renewed rows back, in one transaction: one commit for
	// all. A set-based UPDATE of many rows is planned by MySQL and MariaDB as a scan
	// of the primary key when the OR of many keys is past the range optimizer's
	// limits, and a scanning UPDATE locks every row it reads.
	read, readArgs := s.q.mysqlReadMany(rows)
	err := s.h.InTx(ctx, func(tx *sql.Tx) error {
		clear(got)
		renewed := make(map[key]bool, len(rows))
		for _, r := range rows {
			res, err := tx.ExecContext(ctx, s.q.renew, r.ttl, r.mark, r.mark, r.l.Scope, r.l.Value, r.l.Token)
			if err != nil {
				return err
			}
			// MySQL counts changed rows, and a renewal changes the epoch at least:
			// 1 is a lease renewed, 0 one expired or taken over.
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 1 {
				renewed[key{r.l.Scope, r.l.Value}] = true
			}
		}
		rs, err := tx.QueryContext(ctx, read, readArgs...)
		if err != nil {
			return err
		}
		err = scan(rs, func(int64) bool { return true })
		for k := range got {
			if !renewed[k] {
				delete(got, k)
			}
		}
		return err
	})
	return got, err
}

// mysqlReadMany builds MySQL's SELECT of the rows of a batch, by scope, value and
// token, read back after their renewals.
func (q queries) mysqlReadMany(rows []*renewal) (read string, args []any) {
	var w strings.Builder
	args = make([]any, 0, 3*len(rows))
	for i, r := range rows {
		if i > 0 {
			w.WriteString(" OR ")
		}
		w.WriteString("(scope = ? AND value = ? AND token = ?)")
		args = append(args, r.l.Scope, r.l.Value, r.l.Token)
	}
	read = "SELECT scope, value, owner, expires_ms, mark, epoch, 1 FROM " + q.table + " WHERE " + w.String()
	return read, args
}
