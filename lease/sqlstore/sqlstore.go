package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/flurryid/flurry/internal/sqlconn"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// DefaultTable is the table a zero Options uses.
const DefaultTable = "flurry_leases"

// Options configures a Store. The zero Options is valid for New; Open needs a
// Dialect and a Connector, which ParseURL sets.
type Options struct {
	// Dialect is the engine Open connects to. ParseURL sets it from the URL's
	// scheme; New takes its own and ignores this one.
	Dialect Dialect
	// Connector opens Open's connections (database/sql's sql.OpenDB). ParseURL
	// makes it from the URL with the engine's driver; any driver.Connector for the
	// Dialect's engine works. New ignores it.
	Connector driver.Connector
	// Table names the lease table. Empty means DefaultTable. It must be a plain
	// identifier: letters, digits and underscores, not starting with a digit, at most
	// 63 characters. ParseURL sets it from the URL's table= key.
	Table string
	// SkipCreate leaves out CREATE TABLE IF NOT EXISTS, for accounts without the
	// right to create tables; the table must then exist with the documented columns.
	// The zero value creates the table when it is missing.
	SkipCreate bool
	// RequestTimeout bounds each call whose context has no deadline, Open
	// included. Zero means 5s for PostgreSQL and MySQL, and no bound for SQLite
	// (whose calls wait for other writers as long as the URL's busy_timeout);
	// negative means no bound. ParseURL sets it from the URL's request_timeout=
	// key. A call that runs out of time fails with an error matching
	// bound.ErrNoAnswer.
	RequestTimeout time.Duration
	// MaxConns caps the connections Open's pool keeps to PostgreSQL or MySQL, shared
	// by every call of the store, and so by every session of the process that uses
	// it; calls beyond it wait for a free connection. Zero means min(4*GOMAXPROCS,
	// 16); negative means no cap (database/sql's default: a connection per
	// concurrent call). ParseURL sets it from the URL's max_conns= key. New ignores
	// it: set the caller's *sql.DB with SetMaxOpenConns.
	MaxConns int

	name string // the URL without its password, for messages; set by ParseURL
}

// Store is a lease.Store in a SQL table. It is safe for concurrent use.
type Store struct {
	h *sqlconn.Handle
	q queries
	// renewals writes the renewals that arrive together in one transaction, on
	// PostgreSQL and MySQL (batch.go); nil on SQLite, whose writers take turns
	// on the file anyway.
	renewals *batcher
}

var _ lease.Store = (*Store)(nil)

// New returns a store on a database the caller opened, with any database/sql driver
// for the dialect's engine. It does not touch the database: the table is created, or
// checked, with the context of the first call that needs it. Close leaves db open.
//
// Deadlocks and busy errors are recognized, and retried, for the drivers ParseURL
// uses (pgx, go-sql-driver/mysql, modernc.org/sqlite); with other drivers they are
// returned as they are.
func New(db *sql.DB, dialect Dialect, opts Options) (*Store, error) {
	return newStore(sqlconn.NewHandle(db, opts.conn(dialect)))
}

// newStore makes the store on a Handle from NewHandle or OpenHandle.
func newStore(h *sqlconn.Handle, err error) (*Store, error) {
	if err != nil {
		return nil, err
	}
	s := &Store{h: h, q: Dialect(h.Engine).queries(h.Table)}
	if d := Dialect(h.Engine); d == Postgres || d == MySQL {
		s.renewals = newBatcher(s)
	}
	return s, nil
}

// Dialect returns the store's SQL dialect.
func (s *Store) Dialect() Dialect { return Dialect(s.h.Engine) }

// Table returns the name of the store's table.
func (s *Store) Table() string { return s.h.Table }

// DB returns the store's database handle.
func (s *Store) DB() *sql.DB { return s.h.DB }

// Close closes the database handle if Open made it; a store made by New leaves the
// caller's handle open. It does not release leases.
func (s *Store) Close() error {
	if s.renewals != nil {
		s.renewals.close()
	}
	return s.h.Close()
}

// ensure creates the table if needed, once it has succeeded for this store.
func (s *Store) ensure(ctx context.Context) error { return s.h.Ensure(ctx) }

// retry runs fn again while it fails with a transient error; see sqlconn.Retry.
func (s *Store) retry(ctx context.Context, fn func() error) error { return sqlconn.Retry(ctx, fn) }

// List implements lease.Store. Owner, Token and Expires are set only for values a
// live lease holds.
func (s *Store) List(ctx context.Context, scope string) (_ []lease.Record, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	var out []lease.Record
	err = s.retry(ctx, func() error {
		out = out[:0]
		rows, err := s.h.DB.QueryContext(ctx, s.q.list, scope)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := lease.Record{Scope: scope}
			var expires, held int64
			if err := rows.Scan(&r.Value, &r.Owner, &r.Token, &expires, &r.Mark, &r.Epoch, &held); err != nil {
				return err
			}
			if held == 1 {
				r.Held, r.Expires = true, utcMs(expires)
			} else {
				r.Owner, r.Token = "", ""
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("lease/sqlstore: list %s: %w", scope, err)
	}
	return out, nil
}

// ScopeMark implements lease.ScopeMarker with one aggregate over the scope's rows,
// read at one moment: a session that starts in a scope of many holders reads one
// number, not a row per holder.
func (s *Store) ScopeMark(ctx context.Context, scope string, value int64) (_ int64, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(scope); err != nil {
		return 0, err
	}
	if err := s.ensure(ctx); err != nil {
		return 0, err
	}
	var m sql.NullInt64
	err = s.retry(ctx, func() error {
		return s.h.DB.QueryRowContext(ctx, s.q.scopeMax, scope, value).Scan(&m)
	})
	if err != nil {
		return 0, fmt.Errorf("lease/sqlstore: read the marks of %s: %w", scope, err)
	}
	return max(m.Int64, 0), nil
}

var _ lease.ScopeMarker = (*Store)(nil)

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func utcMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// candidate is a free value Acquire may claim.
type candidate struct {
	value  int64
	mark   int64
	token  string
	hasRow bool
}

// spread is how many of the best free rows an acquirer that lost a race chooses
// among, and the start of its search for a value without a row is a place of its
// own: acquirers of one scope that read it together would otherwise all aim at the
// same next value, and each would lose a race per winner ahead of it.
const spread = 64

// hinted is how many races an acquirer aims at values above the scope's highest
// row before it reads which values are free.
const hinted = 8

// raceHash spreads acquirers that lost the same race: a hash of token and race.
func raceHash(token string, race int) uint64 {
	f := fnv.New64a()
	f.Write([]byte(token))
	f.Write([]byte{byte(race), byte(race >> 8)})
	return f.Sum64()
}

// best finds the value to claim. In the first race, while the pool reaches above
// the scope's highest row, it is the value just above that row, found in the
// primary key's index without reading the scope: a value without a row has never
// been used, so its mark is 0, the lowest there is. After a lost race (race > 1),
// up to race hinted, it is one of the 64 values above, by a hash of
// token and race, or a value of the pool at random when those are outside it; the
// insert claims it only if it has no row. So N acquirers of one scope start with
// O(N) statements of O(log N) work each, instead of each reading every row.
//
// Otherwise, when the pool's top has a row in the first race, or after hinted lost
// races, it reads the scope: the free value with the lowest mark, then the lowest
// value, or false when every value of the pool is held. After a lost race it
// chooses, by a hash of token and race, one of the best free rows and the first
// value without a row from a place below the highest row.
func (s *Store) best(ctx context.Context, scope string, size int64, token string, race int) (candidate, bool, error) {
	var top sql.NullInt64
	if err := s.h.DB.QueryRowContext(ctx, s.q.top, scope).Scan(&top); err != nil {
		return candidate{}, false, err
	}
	above := int64(0) // the lowest value above every row
	if top.Valid {
		above = top.Int64 + 1
	}
	if race <= hinted {
		h := raceHash(token, race)
		switch {
		case race == 1 && above < size:
			return candidate{value: above}, true, nil
		case race > 1 && above < size:
			if v := above + int64(h%spread); v < size {
				return candidate{value: v}, true, nil
			}
			fallthrough
		case race > 1:
			// The top of the pool has a row (a configured value, or a pool that
			// wrapped): a value at random, claimed only if it has no row.
			return candidate{value: int64(h % uint64(size))}, true, nil
		}
	}
	var (
		row     candidate
		haveRow bool
		from    int64
		limit   = 1
		h       uint64
	)
	if race > 1 {
		// The search for a value without a row starts at a place below the
		// highest row, so that the gap it finds leaves the top where it was.
		h, limit = raceHash(token, race), spread
		from = int64(h % uint64(min(size, max(above, 1))))
	}
	err := func() error {
		rows, err := s.h.DB.QueryContext(ctx, s.q.freeRow, scope, size, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		var free []candidate
		for rows.Next() {
			var c candidate
			if err := rows.Scan(&c.value, &c.mark, &c.token); err != nil {
				return err
			}
			c.hasRow = true
			free = append(free, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(free) > 0 {
			row, haveRow = free[int(h%uint64(len(free)))], true
		}
		return nil
	}()
	if err != nil {
		return candidate{}, false, err
	}
	gv, err := s.firstGap(ctx, scope, from, size)
	if err != nil {
		return candidate{}, false, err
	}
	gap := candidate{value: gv}
	switch {
	case gap.value < 0:
		return row, haveRow, nil
	case !haveRow:
		return gap, true, nil
	case row.mark < 0 || row.mark == 0 && row.value < gap.value:
		return row, true, nil
	default:
		return gap, true, nil
	}
}

// firstGap returns the first value of [from, size) without a row in scope, else
// the first of [0, from), else -1 when every value of the pool has a row. Each
// look is one ordered pass over the scope's rows from its start (see q.missing).
func (s *Store) firstGap(ctx context.Context, scope string, from, size int64) (int64, error) {
	for {
		var (
			present int64
			after   sql.NullInt64
		)
		if err := s.h.DB.QueryRowContext(ctx, s.q.missing, scope, from, scope, from, size).Scan(&present, &after); err != nil {
			return 0, err
		}
		switch {
		case present == 0:
			return from, nil
		case after.Valid:
			return after.Int64, nil
		case from > 0:
			// Every value from the place on has a row: look from 0.
			from = 0
			continue
		}
		return -1, nil
	}
}

// Acquire implements lease.Store. Expiry is judged, and Expires given, by the
// database's clock. While the pool has values above the scope's highest row it
// inserts one of them, found in the primary key's index (see best), and reads the
// free rows of the scope only when the top of the pool is reached.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, fmt.Sprintf("%d values", size), func(token string, race int) (candidate, bool, error) {
		return s.best(ctx, scope, size, token, race)
	})
}

// AcquireValue implements lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (_ lease.Lease, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	return s.acquire(ctx, scope, owner, ttl, fmt.Sprintf("value %d", value), func(string, int) (candidate, bool, error) {
		c := candidate{value: value}
		var free int64
		err := s.h.DB.QueryRowContext(ctx, s.q.one, scope, value).Scan(&c.mark, &c.token, &free)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return c, true, nil
		case err != nil:
			return c, false, err
		}
		c.hasRow = true
		return c, free == 1, nil
	})
}

// acquire claims the candidate find returns, looking again after each lost race.
func (s *Store) acquire(ctx context.Context, scope, owner string, ttl time.Duration, what string, find func(token string, race int) (candidate, bool, error)) (lease.Lease, error) {
	if err := s.ensure(ctx); err != nil {
		return lease.Lease{}, err
	}
	token, ms := newToken(), ttl.Milliseconds()
	// Each lost race means another acquirer got a value, so the loop ends when the
	// pool is full if not before; the bound only guards against a runaway.
	const races = 1000
	for race := 1; ; race++ {
		var (
			c   candidate
			ok  bool
			won bool
		)
		err := s.retry(ctx, func() error {
			var err error
			c, ok, err = find(token, race)
			if err != nil || !ok {
				return err
			}
			var res sql.Result
			if c.hasRow {
				res, err = s.h.DB.ExecContext(ctx, s.q.claim, owner, token, ms, scope, c.value, c.token, c.mark)
			} else {
				res, err = s.h.DB.ExecContext(ctx, s.q.insert, scope, c.value, owner, token, ms)
			}
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			won = n == 1
			return err
		})
		if err != nil {
			return lease.Lease{}, fmt.Errorf("lease/sqlstore: acquire in %s: %w", scope, err)
		}
		if !ok {
			return lease.Lease{}, fmt.Errorf("lease/sqlstore: scope %s, %s: %w", scope, what, lease.ErrNoFreeValue)
		}
		if won {
			l := lease.Lease{Scope: scope, Value: c.value, Owner: owner, Token: token}
			var live int64
			err := s.retry(ctx, func() error {
				var expires int64
				err := s.h.DB.QueryRowContext(ctx, s.q.readBack, scope, c.value, token).Scan(&l.Owner, &expires, &l.Mark, &l.Epoch, &live)
				l.Expires = utcMs(expires)
				return err
			})
			if err != nil {
				return lease.Lease{}, fmt.Errorf("lease/sqlstore: acquire in %s: read back %d: %w", scope, c.value, err)
			}
			return l, nil
		}
		if race == races {
			return lease.Lease{}, fmt.Errorf("lease/sqlstore: acquire in %s: lost %d races for a value; too many acquirers at once", scope, races)
		}
		if race > 2 {
			if err := sqlconn.Backoff().Wait(ctx, race-2); err != nil {
				return lease.Lease{}, fmt.Errorf("lease/sqlstore: acquire in %s: %w", scope, err)
			}
		}
	}
}

// Renew implements lease.Store. The lease is live while its expiry, by the
// database's clock, is in the future.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTTL(ttl); err != nil {
		return l, fmt.Errorf("lease/sqlstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	return s.renew(ctx, l, ttl, mark)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckPinTTL(ttl); err != nil {
		return l, fmt.Errorf("lease/sqlstore: pin %s/%d: %w", l.Scope, l.Value, err)
	}
	return s.renew(ctx, l, ttl, mark)
}

func (s *Store) renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return l, err
	}
	lost := fmt.Errorf("lease/sqlstore: renew %s/%d: %w", l.Scope, l.Value, lease.ErrLost)
	if l.Token == "" {
		return l, lost
	}
	if err := s.ensure(ctx); err != nil {
		return l, err
	}
	var out lease.Lease
	if s.renewals != nil {
		out, err = s.renewals.run(ctx, l, ttl, mark, lost)
	} else {
		out, err = s.renewOne(ctx, l, ttl, mark, lost)
	}
	if errors.Is(err, lease.ErrLost) {
		return l, err
	}
	if err != nil {
		return l, fmt.Errorf("lease/sqlstore: renew %s/%d: %w", l.Scope, l.Value, err)
	}
	return out, nil
}

// renewOne renews l with a statement of its own. It returns lost when the lease
// is not l's anymore, and other errors unwrapped.
func (s *Store) renewOne(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64, lost error) (_ lease.Lease, err error) {
	out := l
	if s.q.renewRet != "" {
		// One statement, one round trip: the UPDATE returns the row it renewed.
		err = s.retry(ctx, func() error {
			var expires int64
			err := s.h.DB.QueryRowContext(ctx, s.q.renewRet, ttl.Milliseconds(), mark, mark, l.Scope, l.Value, l.Token).Scan(&out.Owner, &expires, &out.Mark, &out.Epoch)
			if errors.Is(err, sql.ErrNoRows) {
				return lost
			}
			out.Expires = utcMs(expires)
			return err
		})
	} else {
		err = s.renewReadBack(ctx, l, ttl, mark, lost, &out)
	}
	if err != nil {
		return l, err
	}
	return out, nil
}

// renewReadBack renews with an UPDATE and reads the row back, for engines
// without UPDATE ... RETURNING.
func (s *Store) renewReadBack(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64, lost error, out *lease.Lease) error {
	return s.retry(ctx, func() error {
		res, err := s.h.DB.ExecContext(ctx, s.q.renew, ttl.Milliseconds(), mark, mark, l.Scope, l.Value, l.Token)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		var expires, live int64
		err = s.h.DB.QueryRowContext(ctx, s.q.readBack, l.Scope, l.Value, l.Token).Scan(&out.Owner, &expires, &out.Mark, &out.Epoch, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return lost
		}
		if err != nil {
			return err
		}
		// MySQL counts changed rows, not matched ones, but a renewal changes the
		// epoch at least: 0 rows is a lease expired or taken over.
		if n == 0 {
			return lost
		}
		out.Expires = utcMs(expires)
		return nil
	})
}

// Takeover implements lease.Store: in one transaction it reads l's row by its
// token, locking it, then writes the new holder with one UPDATE guarded by the
// token, the expiry and the mark and epoch it read. The holder's renewals wait for
// the lock, so they land before the read or fail after the write; of racing
// takeovers one changes the row and the others find the token gone. The mark it
// returns is the one read, from before the raise.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (_ lease.Lease, err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return l, err
	}
	lost := fmt.Errorf("lease/sqlstore: take over %s/%d: %w", l.Scope, l.Value, lease.ErrLost)
	if l.Token == "" {
		return l, lost
	}
	if err := s.ensure(ctx); err != nil {
		return l, err
	}
	out := lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: newToken()}
	// With the row locked from the read on, the UPDATE misses only when the lease
	// expired between the two (the next attempt then finds it expired); the bound
	// only guards against a runaway.
	const races = 100
	for race := 1; ; race++ {
		var won bool
		err := s.h.InTx(ctx, func(tx *sql.Tx) error {
			won = false
			var (
				before, epoch, expires, live int64
				was                          string
			)
			err := tx.QueryRowContext(ctx, s.q.lockRow, l.Scope, l.Value, l.Token).Scan(&was, &expires, &before, &epoch, &live)
			if errors.Is(err, sql.ErrNoRows) || err == nil && live == 0 {
				// A try again after a commit whose answer was lost finds the row
				// ours: the mark from before it is gone, and the mark now, at or
				// above it, stands in.
				err := tx.QueryRowContext(ctx, s.q.readBack, l.Scope, l.Value, out.Token).Scan(&was, &expires, &out.Mark, &out.Epoch, &live)
				if errors.Is(err, sql.ErrNoRows) {
					return lost
				}
				won, out.Expires = err == nil, utcMs(expires)
				return err
			}
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, s.q.takeover, owner, out.Token, ttl.Milliseconds(), mark, mark,
				l.Scope, l.Value, l.Token, before, epoch)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil || n == 0 {
				return err
			}
			err = tx.QueryRowContext(ctx, s.q.readBack, l.Scope, l.Value, out.Token).Scan(&was, &expires, &out.Mark, &out.Epoch, &live)
			won, out.Mark, out.Expires = err == nil, before, utcMs(expires)
			return err
		})
		if errors.Is(err, lease.ErrLost) {
			return l, err
		}
		if err != nil {
			return l, fmt.Errorf("lease/sqlstore: take over %s/%d: %w", l.Scope, l.Value, err)
		}
		if won {
			return out, nil
		}
		if race == races {
			return l, fmt.Errorf("lease/sqlstore: take over %s/%d: the row kept changing under %d attempts", l.Scope, l.Value, races)
		}
		if err := sqlconn.Backoff().Wait(ctx, race); err != nil {
			return l, fmt.Errorf("lease/sqlstore: take over %s/%d: %w", l.Scope, l.Value, err)
		}
	}
}

// Release implements lease.Store: it ends a live lease and sets the value's mark to
// mark, the holder's word on how far it issued, even below its reservation. A lease
// that expired, by the database's clock, or that is not l's anymore is lost: Release
// returns an error wrapping lease.ErrLost and changes nothing.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) (err error) {
	ctx, end := s.h.Call.Start(ctx)
	defer end(&err)
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return err
	}
	lost := fmt.Errorf("lease/sqlstore: release %s/%d: %w", l.Scope, l.Value, lease.ErrLost)
	if l.Token == "" {
		return lost
	}
	if err := s.ensure(ctx); err != nil {
		return err
	}
	var n int64
	err = s.retry(ctx, func() error {
		res, err := s.h.DB.ExecContext(ctx, s.q.release, mark, l.Scope, l.Value, l.Token)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("lease/sqlstore: release %s/%d: %w", l.Scope, l.Value, err)
	}
	if n == 0 {
		return lost
	}
	return nil
}

// Identity names the table: the database server's own identifier, the database
// and the table (see the package documentation). A SQLite file is private to its
// machine.
func (s *Store) Identity(ctx context.Context) (lease.StoreIdentity, error) {
	id, private, err := s.h.Identity(ctx)
	if err != nil {
		return lease.StoreIdentity{}, fmt.Errorf("lease/sqlstore: %w", err)
	}
	return lease.StoreIdentity{ID: id, Private: private}, nil
}
